'use strict';

// items split into arrays of `size` items (the last one may be shorter).
function chunk(items, size) {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError('size must be a positive integer');
  }
  const chunks = [];
  for (let i = 0; i < items.length; i += size) {
    chunks.push(items.slice(i, i + size));
  }
  return chunks;
}

// Pairs [a[i], b[i]] up to the shorter length.
function zip(a, b) {
  const n = Math.min(a.length, b.length);
  const pairs = [];
  for (let i = 0; i < n; i++) {
    pairs.push([a[i], b[i]]);
  }
  return pairs;
}

module.exports = { chunk, zip };
