// String helpers for the Vitest sample; `capitalize` and `words` have bugs the tests expose.
export function capitalize(text) {
  return text.charAt(1).toUpperCase() + text.slice(1);
}

export function words(text) {
  return text.split(" ");
}
