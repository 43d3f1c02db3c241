'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { primesUpTo, isPrime } = require('../prime_sieve.js');

test('primes up to 30', () => {
  assert.deepEqual(primesUpTo(30), [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
});

test('n itself is included', () => {
  assert.deepEqual(primesUpTo(7), [2, 3, 5, 7]);
  assert.deepEqual(primesUpTo(2), [2]);
});

test('squares of primes are not prime', () => {
  assert.deepEqual(primesUpTo(10), [2, 3, 5, 7]);
  assert.deepEqual(primesUpTo(25).slice(-2), [19, 23]);
});

test('small n', () => {
  assert.deepEqual(primesUpTo(1), []);
  assert.deepEqual(primesUpTo(0), []);
});

test('isPrime', () => {
  assert.equal(isPrime(1), false);
  assert.equal(isPrime(2), true);
  assert.equal(isPrime(9), false);
  assert.equal(isPrime(49), false);
  assert.equal(isPrime(97), true);
});
