const { missing } = require("../does-not-exist");

test("never runs", () => {
  expect(missing).toBeDefined();
});
