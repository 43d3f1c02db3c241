const { describe, it, test } = require("node:test");
const assert = require("node:assert");
const { add, subtract, divide } = require("../math.js");

test("adds", () => {
  assert.strictEqual(add(2, 3), 5);
});

describe("arithmetic", () => {
  describe("nested group", () => {
    it("subtracts", () => {
      assert.strictEqual(subtract(5, 3), 2);
    });
  });
  it("divides by zero", () => {
    assert.strictEqual(divide(1, 0), Infinity);
  });
  it.skip("skipped for now", () => {});
});
