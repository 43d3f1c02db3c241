const { total, remove } = require("../cart");

describe("cart", () => {
  test("empty cart costs nothing", () => {
    expect(total([])).toBe(0);
  });

  describe("with items", () => {
    test("totals prices", () => {
      expect(total([{ name: "a", price: 10 }, { name: "b", price: 5 }])).toBe(15);
    });

    test("removing a missing item keeps the cart", () => {
      const items = [{ name: "a", price: 1 }];
      expect(remove(items, "zzz")).toHaveLength(1);
    });
  });

  test.skip("coupons", () => {});
});
