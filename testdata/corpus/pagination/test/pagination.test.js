'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { paginate } = require('../pagination.js');

const letters = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

test('first page', () => {
  assert.deepEqual(paginate(letters, 1, 3), {
    items: ['a', 'b', 'c'], page: 1, totalPages: 3, hasPrev: false, hasNext: true,
  });
});

test('middle page', () => {
  const p = paginate(letters, 2, 3);
  assert.deepEqual(p.items, ['d', 'e', 'f']);
  assert.equal(p.hasPrev, true);
  assert.equal(p.hasNext, true);
});

test('last, partial page', () => {
  const p = paginate(letters, 3, 3);
  assert.deepEqual(p.items, ['g']);
  assert.equal(p.hasNext, false);
});

test('out of range pages are clamped', () => {
  assert.equal(paginate(letters, 9, 3).page, 3);
  assert.equal(paginate(letters, -2, 3).page, 1);
});

test('empty list has one empty page', () => {
  assert.deepEqual(paginate([], 1, 10), {
    items: [], page: 1, totalPages: 1, hasPrev: false, hasNext: false,
  });
});
