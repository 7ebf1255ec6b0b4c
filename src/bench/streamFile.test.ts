import { describe, expect, it } from "vitest";
import { finalMismatch, parseStream, readStream } from "./streamFile.ts";

const final = { events: 1, instructions: 0, transition_counter: 0, tasks: 0 };
const text = (...lines: string[]) => `${lines.join("\n")}\n`;
const header = JSON.stringify({ name: "s", config: { nthreads: 1 } });
const last = JSON.stringify({ final });

describe("benchmark stream files", () => {
  it("parses the header, the events (blank lines skipped) and the final line", () => {
    const s = parseStream(text(header, "", '{"cls":"PauseEvent"}', last), "f", (d) => d.cls);
    expect(s).toEqual({ name: "s", config: { nthreads: 1 }, events: ["PauseEvent"], final });
  });

  it("names the file and the line (counting blank lines) of what it cannot read", () => {
    const decode = (d: Record<string, unknown>) => d;
    expect(() => parseStream(text(header, "", "[1]", last), "f", decode)).toThrow(
      "f: line 3 is not an object",
    );
    expect(() => parseStream(text(header, "{oops", last), "f", decode)).toThrow(/^f: line 2: /);
    expect(() => parseStream(text("{}", "{}", last), "f", decode)).toThrow(
      "f: line 1: the header has no config",
    );
    expect(() => parseStream(text('{"config":null}', last), "f", decode)).toThrow(
      "f: line 1: the header has no config",
    );
    // One line cannot be both the header and the final line.
    expect(() => parseStream(text(header, ""), "f", decode)).toThrow("f: no header and final line");
    expect(() => parseStream(text(header, "{}", "{}"), "f", decode)).toThrow(
      'f: the last line has no "final" record',
    );
    expect(() => parseStream(text(header, last), "f", decode)).toThrow(
      "f: 0 events, but the final line says 1",
    );
  });

  it("names the file when reading it fails, as when parsing it does", () => {
    const decode = (d: Record<string, unknown>) => d;
    // zlib's message for a gzip stream cut short names no file, nor that it is gzip's.
    const cut = () => {
      throw new Error("unexpected end of file");
    };
    expect(() => readStream("dir/s.jsonl.gz", cut, decode)).toThrow(
      "dir/s.jsonl.gz: truncated gzip data (the file ends too early)",
    );
    // A message that names the file already is kept as it is.
    const missing = (path: string) => {
      throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    };
    expect(() => readStream("dir/s.jsonl.gz", missing, decode)).toThrow(
      /^ENOENT: no such file or directory, open 'dir\/s.jsonl.gz'$/,
    );
    expect(readStream("f", () => text(header, "{}", last), decode).events).toEqual([{}]);
    const thrownText = () => {
      throw "gone";
    };
    expect(() => readStream("f", thrownText, decode)).toThrow("f: gone");
  });

  it("says how a replay's end differs from the final line", () => {
    expect(finalMismatch({ instructions: 0, transition_counter: 0, tasks: 0 }, final)).toBeNull();
    expect(finalMismatch({ instructions: 0, transition_counter: 0, tasks: 1 }, final)).toMatch(
      /^got \{"instructions":0,"transition_counter":0,"tasks":1\}/,
    );
    expect(finalMismatch({ instructions: 1, transition_counter: 0, tasks: 0 }, final)).toBe(
      'got {"instructions":1,"transition_counter":0,"tasks":0}, expected {"instructions":0,"transition_counter":0,"tasks":0}',
    );
    // bench:lean passes its replay's whole record: the seconds are no part of the end.
    const end = { seconds: 0.25, instructions: 0, transition_counter: 3, tasks: 0 };
    expect(finalMismatch(end, final)).toBe(
      'got {"instructions":0,"transition_counter":3,"tasks":0}, expected {"instructions":0,"transition_counter":0,"tasks":0}',
    );
  });
});
