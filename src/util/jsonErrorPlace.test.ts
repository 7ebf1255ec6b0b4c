import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonErrorWithPlace, lineAndColumn } from "./jsonErrorPlace.ts";

/** JSON.parse's refusal of `text`, with its place. */
function refusal(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return jsonErrorWithPlace(text, err);
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe("jsonErrorWithPlace", () => {
  it("says the line and column of a position Node.js gives as a character count", () => {
    const text = '{\n  "a": ["f", 1],\n  "b": ["g", "a"],\n}';
    expect(refusal(text)).toBe(
      "Expected double-quoted property name in JSON at position 38 (line 4, column 1)",
    );
    expect(refusal('{"a": 1\n"b": 2}')).toMatch(/at position 8 \(line 2, column 1\)$/);
  });

  it("finds the place of an unexpected token, which Node.js does not give: a trailing comma, a single quote", () => {
    expect(refusal('{\n  "a": [1, 2,],\n  "b": 3\n}')).toMatch(
      /^Unexpected token '\]', .* is not valid JSON \(line 2, column 14\)$/s,
    );
    expect(refusal("{\n  \"a\": ['f']\n}")).toMatch(/ \(line 2, column 9\)$/);
    // A text past the first screen: the place, not just its neighbourhood.
    const long = `{\n${Array.from({ length: 500 }, (_, i) => `  "k${i}": ["f", ${i}],`).join("\n")}\n}`;
    expect(refusal(long)).toMatch(/ \(line 502, column 1\)$/);
  });

  it("finds the place of an unexpected token whose quoted text says a position itself", () => {
    // Node.js quotes the text around the token: "at position 1" there is the text's, not the place.
    expect(refusal('["at position 1",]')).toMatch(/ is not valid JSON \(line 1, column 18\)$/);
    expect(refusal('{"a": ["f", "at position 99",]}')).toMatch(/ \(line 1, column 30\)$/);
  });

  it("places a text cut short at its end", () => {
    expect(refusal('{\n  "a": [1,')).toBe("Unexpected end of JSON input (line 2, column 11)");
    expect(refusal("")).toBe("Unexpected end of JSON input (line 1, column 1)");
  });

  it("puts every place at the first character where no JSON could go on", () => {
    /** Whether `prefix` is JSON, or JSON cut short: wrong only at a place before its end. */
    const soFarRight = (prefix: string) => {
      try {
        JSON.parse(prefix);
        return true;
      } catch (err) {
        const at = /at position (\d+)/.exec((err as Error).message);
        return /end of JSON input/.test((err as Error).message) || Number(at?.[1]) >= prefix.length;
      }
    };
    // A document (on one line) with one character replaced: the text is right up to it.
    const docs = fc.json({ maxDepth: 3 }).filter((t) => t.length > 0);
    fc.assert(
      fc.property(docs, fc.nat(), fc.constantFrom("]", "}", ",", "'", "x", ":"), (doc, n, c) => {
        const i = n % doc.length;
        const text = doc.slice(0, i) + c + doc.slice(i + 1);
        let message: string;
        try {
          JSON.parse(text);
          return;
        } catch (err) {
          message = jsonErrorWithPlace(text, err);
        }
        const place = / \(line (\d+), column (\d+)\)$/.exec(message);
        expect(place, message).not.toBeNull();
        expect(place?.[1]).toBe("1");
        const at = Number(place?.[2]) - 1;
        expect(at).toBeGreaterThanOrEqual(i);
        expect(at).toBeLessThanOrEqual(text.length);
        expect(soFarRight(text.slice(0, at)), message).toBe(true);
        if (at < text.length) expect(soFarRight(text.slice(0, at + 1)), message).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("counts lines and columns from 1", () => {
    expect(lineAndColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn("ab\ncd", 3)).toEqual({ line: 2, column: 1 });
    expect(lineAndColumn("ab\ncd", 5)).toEqual({ line: 2, column: 3 });
  });
});
