'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { chunk, zip } = require('../chunk_array.js');

test('even chunks', () => {
  assert.deepEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
});

test('last chunk shorter', () => {
  assert.deepEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(chunk([1, 2, 3], 1), [[1], [2], [3]]);
});

test('bad size', () => {
  assert.throws(() => chunk([1], 0), RangeError);
  assert.throws(() => chunk([1], 1.5), RangeError);
});

test('zip stops at the shorter', () => {
  assert.deepEqual(zip([1, 2, 3], ['a', 'b']), [[1, 'a'], [2, 'b']]);
  assert.deepEqual(zip([], [1]), []);
});
