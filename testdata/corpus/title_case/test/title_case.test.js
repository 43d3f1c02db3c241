'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { titleCase, slugify } = require('../title_case.js');

test('title case keeps small words', () => {
  assert.equal(titleCase('the lord of the rings'), 'The Lord of the Rings');
});

test('first and last words are capitalised', () => {
  assert.equal(titleCase('a world to live in'), 'A World To Live In');
});

test('surrounding and repeated spaces', () => {
  assert.equal(titleCase('  war   and peace '), 'War and Peace');
});

test('mixed input case', () => {
  assert.equal(titleCase('hELLO wORLD'), 'Hello World');
});

test('slugify', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
  assert.equal(slugify('  Node 20 & You  '), 'node-20-you');
});
