'use strict';

// The largest sum of a non-empty run of consecutive numbers (Kadane's algorithm),
// with the run's first and last index.
function maxSubarray(nums) {
  if (nums.length === 0) throw new Error('empty input');
  let best = nums[0];
  let bestStart = 0;
  let bestEnd = 0;
  let current = nums[0];
  let start = 0;
  for (let i = 1; i < nums.length; i++) {
    if (current < 0) {
      current = nums[i];
      start = i;
    } else {
      current += nums[i];
    }
    if (current > best) {
      best = current;
      bestStart = start;
      bestEnd = i;
    }
  }
  return { sum: best, start: bestStart, end: bestEnd };
}

module.exports = { maxSubarray };
