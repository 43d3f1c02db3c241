'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDuration, formatDuration } = require('../parse_duration.js');

test('parse', () => {
  assert.equal(parseDuration('1h30m'), 5400);
  assert.equal(parseDuration('45s'), 45);
  assert.equal(parseDuration('2h5s'), 7205);
});

test('parse rejects garbage', () => {
  assert.throws(() => parseDuration(''), /bad duration/);
  assert.throws(() => parseDuration('10'), /bad duration/);
  assert.throws(() => parseDuration('5m x'), /bad duration/);
  assert.throws(() => parseDuration('x5m'), /bad duration/);
});

test('format', () => {
  assert.equal(formatDuration(5400), '1h30m');
  assert.equal(formatDuration(3630), '1h30s');
  assert.equal(formatDuration(59), '59s');
  assert.equal(formatDuration(0), '0s');
});

test('round trip', () => {
  for (const s of [1, 61, 3599, 3661, 86400]) {
    assert.equal(parseDuration(formatDuration(s)), s);
  }
});
