// Arithmetic for the node --test sample; `subtract` and `divide` have bugs the tests expose.
exports.add = (a, b) => a + b;
exports.subtract = (a, b) => b - a;
exports.divide = (a, b) => {
  if (b === 0) throw new RangeError("division by zero");
  return a / b;
};
