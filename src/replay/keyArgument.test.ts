import { describe, expect, it } from "vitest";
import { tupleKeyForm } from "./keyArgument.ts";

describe("a tuple key typed on the command line", () => {
  it("reads as the str() form the dumps hold, however spaced and quoted", () => {
    for (const typed of ["('inc',41)", '("inc", 41)', "( 'inc' ,41 )", "['inc', 41]"]) {
      expect(tupleKeyForm(typed)).toBe("('inc', 41)");
    }
    expect(tupleKeyForm('(("a",1),"b")')).toBe("(('a', 1), 'b')");
    expect(tupleKeyForm("['x']")).toBe("('x',)");
    // Only a comma makes a tuple: ('x') is the string x.
    expect(tupleKeyForm("('x')")).toBe("x");
    expect(tupleKeyForm('("it\'s",1)')).toBe(`("it's", 1)`);
  });

  it("is null for a key already in that form, or for anything not such a literal", () => {
    for (const arg of [
      "('inc', 41)",
      "('x',)",
      "inc-41",
      "(x, 1)",
      "('a', 1) x",
      "('a', 1",
      "('a' 1)",
      "",
    ]) {
      expect(tupleKeyForm(arg)).toBeNull();
    }
  });
});
