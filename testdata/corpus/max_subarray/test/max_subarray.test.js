'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { maxSubarray } = require('../max_subarray.js');

test('classic example', () => {
  assert.deepEqual(maxSubarray([-2, 1, -3, 4, -1, 2, 1, -5, 4]), { sum: 6, start: 3, end: 6 });
});

test('single element', () => {
  assert.deepEqual(maxSubarray([5]), { sum: 5, start: 0, end: 0 });
});

test('all negative', () => {
  assert.deepEqual(maxSubarray([-3, -1, -2]), { sum: -1, start: 1, end: 1 });
});

test('earliest of equal sums', () => {
  assert.deepEqual(maxSubarray([1, -1, 1]), { sum: 1, start: 0, end: 0 });
});

test('run after a negative prefix', () => {
  assert.deepEqual(maxSubarray([-3, 4, 5]), { sum: 9, start: 1, end: 2 });
});

test('empty input', () => {
  assert.throws(() => maxSubarray([]), /empty/);
});
