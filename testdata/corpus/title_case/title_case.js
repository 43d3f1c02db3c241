'use strict';

const SMALL_WORDS = new Set(['a', 'an', 'and', 'in', 'of', 'on', 'or', 'the']);

// "the lord of the rings" -> "The Lord of the Rings". Small words stay lower case,
// except as the first or the last word.
function titleCase(text) {
  const words = text.trim().toLowerCase().split(/\s+/);
  return words
    .map((word, i) => {
      const edge = i === 0 || i === words.length - 1;
      if (!edge && SMALL_WORDS.has(word)) return word;
      return word.charAt(0).toUpperCase() + word.slice(1);
    })
    .join(' ');
}

// "Hello, World!" -> "hello-world".
function slugify(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

module.exports = { titleCase, slugify };
