'use strict';

// The primes up to and including n, by the sieve of Eratosthenes.
function primesUpTo(n) {
  if (n < 2) return [];
  const sieve = new Array(n + 1).fill(true);
  sieve[0] = false;
  sieve[1] = false;
  for (let p = 2; p * p <= n; p++) {
    if (!sieve[p]) continue;
    for (let m = p * p; m <= n; m += p) {
      sieve[m] = false;
    }
  }
  const primes = [];
  for (let i = 2; i <= n; i++) {
    if (sieve[i]) primes.push(i);
  }
  return primes;
}

// Trial division.
function isPrime(n) {
  if (n < 2) return false;
  for (let d = 2; d * d <= n; d++) {
    if (n % d === 0) return false;
  }
  return true;
}

module.exports = { primesUpTo, isPrime };
