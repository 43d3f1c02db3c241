import { capitalize, words } from "../strings.js";

describe("strings", () => {
  it("capitalizes", () => {
    expect(capitalize("hello")).toBe("Hello");
  });

  describe("words", () => {
    it("splits on spaces", () => {
      expect(words("a b")).toEqual(["a", "b"]);
    });

    it("ignores double spaces", () => {
      expect(words("a  b")).toEqual(["a", "b"]);
    });
  });

  it.skip("handles unicode", () => {});
});
