'use strict';

const UNITS = { h: 3600, m: 60, s: 1 };

// "1h30m", "45s", "2h5s" -> seconds. Throws on anything else.
function parseDuration(text) {
  const re = /(\d+)([hms])/g;
  let total = 0;
  let consumed = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    if (match.index !== consumed) throw new Error(`bad duration: ${text}`);
    total += Number(match[1]) * UNITS[match[2]];
    consumed += match[0].length;
  }
  if (consumed === 0 || consumed !== text.length) throw new Error(`bad duration: ${text}`);
  return total;
}

// 5400 -> "1h30m", 0 -> "0s".
function formatDuration(seconds) {
  if (seconds === 0) return '0s';
  let rest = seconds;
  let out = '';
  for (const [unit, size] of Object.entries(UNITS)) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}

module.exports = { parseDuration, formatDuration };
