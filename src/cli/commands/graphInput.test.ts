import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { jsonFriendly, loadGraphInput } from "./graphInput.ts";

describe("loadGraphInput", () => {
  it("says which file's graph function threw", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      const file = join(dir, "throws.mjs");
      writeFileSync(file, 'export function graph() { throw new Error("no data today"); }\n');
      await expect(loadGraphInput(file)).rejects.toThrow(
        `${file}: its graph function threw: no data today`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("awaits a graph exported as a promise, as it awaits a graph function's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      const file = join(dir, "promised.mjs");
      writeFileSync(
        file,
        'export const graph = new Promise((r) => setTimeout(() => r({ a: ["inc", 1] }), 10));\n',
      );
      expect((await loadGraphInput(file)).graph).toEqual({ a: ["inc", 1] });
      const nested = join(dir, "nested.mjs");
      writeFileSync(
        nested,
        "export const graph = async () => Promise.resolve(new Map([['a', 1]]));\n",
      );
      expect((await loadGraphInput(nested)).graph).toEqual(new Map([["a", 1]]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads a JSON graph that starts with a byte order mark, as Windows editors write it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      const file = join(dir, "bom.json");
      writeFileSync(file, `\uFEFF${JSON.stringify({ a: 1, b: ["inc", "a"] })}`);
      expect((await loadGraphInput(file)).graph).toEqual({ a: 1, b: ["inc", "a"] });
      // UTF-16, as PowerShell 5's > and Out-File write by default: little- and big-endian.
      const text = `\uFEFF${JSON.stringify({ a: 1, é: ["inc", "a"] })}`;
      const le = join(dir, "utf16le.json");
      writeFileSync(le, Buffer.from(text, "utf16le"));
      expect((await loadGraphInput(le)).graph).toEqual({ a: 1, é: ["inc", "a"] });
      const be = join(dir, "utf16be.json");
      writeFileSync(be, Buffer.from(text, "utf16le").swap16());
      expect((await loadGraphInput(be)).graph).toEqual({ a: 1, é: ["inc", "a"] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a device, unread: a graph linked to /dev/zero was read forever", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      for (const name of ["zero.json", "zero.mjs"]) {
        const file = join(dir, name);
        symlinkSync("/dev/zero", file);
        await expect(loadGraphInput(file)).rejects.toThrow(
          `${file}: cannot read the file: it is a character device, not a regular file`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says in words that a graph file is missing or a directory, for JSON and modules", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      const cases = [
        ["missing.json", "cannot read the graph: it does not exist"],
        ["missing.mjs", "cannot import: it does not exist"],
        ["dir.json", "cannot read the graph: it is a directory"],
        ["dir.mjs", "cannot import: it is a directory"],
      ];
      mkdirSync(join(dir, "dir.json"));
      mkdirSync(join(dir, "dir.mjs"));
      for (const [name, why] of cases) {
        const file = join(dir, name);
        // Not Node's "ENOENT: …, open" nor "Directory import … imported from" weft's source.
        await expect(loadGraphInput(file)).rejects.toMatchObject({ message: `${file}: ${why}` });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a bare graph with a key named graph, rather than read it as the wrapper", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
    try {
      const bare = join(dir, "bare.json");
      writeFileSync(bare, JSON.stringify({ graph: { a: 1 }, x: ["identity", "graph"] }));
      await expect(loadGraphInput(bare)).rejects.toThrow(
        /bare\.json: a graph with a key "graph" \(besides "x"\) cannot be told from the .* form: wrap it as \{"graph": \{\.\.\.\}\}$/,
      );
      // A field of the wrapper misspelt: said, beside the way to keep a task of that name.
      const slip = join(dir, "slip.json");
      writeFileSync(slip, JSON.stringify({ graph: { a: 1 }, key: ["a"], task: [] }));
      await expect(loadGraphInput(slip)).rejects.toThrow(
        /slip\.json: a graph with a key "graph" \(besides "key", "task"\) .*: wrap it as \{"graph": \{\.\.\.\}\}, or, if "key" is a misspelt "keys" and "task" is a misspelt "tasks", name it so$/,
      );
      const wrapped = join(dir, "wrapped.json");
      writeFileSync(wrapped, JSON.stringify({ graph: { a: 1 }, keys: ["a"], tasks: [] }));
      expect((await loadGraphInput(wrapped)).keys).toEqual(["a"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("loadGraphInput of -, standard input", () => {
  /** A stream giving `chunks`, a terminal's if `isTTY`. */
  function stdin(chunks: string[], isTTY = false) {
    return Object.assign(Readable.from(chunks.map((c) => Buffer.from(c))), { isTTY });
  }

  it("reads a JSON graph to the end of the stream, its task modules relative to the working directory", async () => {
    const input = await loadGraphInput("-", {
      stream: stdin(['{"graph": {"x": ["inc", 1]}, ', '"keys": ["x"], "tasks": ["./t.ts"]}']),
    });
    expect(input).toEqual({
      graph: { x: ["inc", 1] },
      keys: ["x"],
      taskModules: [pathToFileURL(join(process.cwd(), "t.ts")).href],
    });
  });

  it("says it waits before reading a terminal, and nothing before reading a pipe", async () => {
    const said: string[] = [];
    const onTerminal = () => said.push("waiting");
    await loadGraphInput("-", { stream: stdin(['{"a": 1}']), onTerminal });
    expect(said).toEqual([]);
    await loadGraphInput("-", { stream: stdin(['{"a": 1}'], true), onTerminal });
    expect(said).toEqual(["waiting"]);
  });

  it("names stdin in its errors", async () => {
    await expect(loadGraphInput("-", { stream: stdin(["[1, 2]"]) })).rejects.toThrow(
      "stdin: expected a JSON object",
    );
    const failing = new Readable({
      read() {
        this.destroy(new Error("EIO: i/o error, read"));
      },
    });
    await expect(loadGraphInput("-", { stream: failing })).rejects.toThrow(
      "stdin: cannot read the graph: EIO: i/o error, read",
    );
    // Said as what happened upstream, where JSON.parse said "Unexpected end of JSON input".
    await expect(loadGraphInput("-", { stream: stdin([]) })).rejects.toThrow(
      /^stdin: no graph came: the input was empty$/,
    );
    await expect(loadGraphInput("-", { stream: stdin([" \n", "\t"]) })).rejects.toThrow(
      /^stdin: no graph came: the input held only whitespace$/,
    );
  });

  it("stops reading a stream with no end past what one string holds, where it read until memory ran out", async () => {
    // `weft run - < /dev/zero`: the same chunk again and again, which costs no memory.
    const chunk = Buffer.alloc(1 << 20);
    let given = 0;
    const endless = new Readable({
      read() {
        given++;
        this.push(chunk);
      },
    });
    await expect(loadGraphInput("-", { stream: endless })).rejects.toThrow(
      /^stdin: cannot read the graph: more than the 512\.00 MiB one string holds$/,
    );
    expect(given).toBeLessThan(600);
    expect(endless.destroyed).toBe(true);
  }, 30_000);
});

describe("loadGraphInput's checks of a file's fields", () => {
  const dir = mkdtempSync(join(tmpdir(), "weft-graph-input-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  it("refuses JSON that is no object, and keys or tasks that are no lists of strings", async () => {
    for (const [name, content, said] of [
      ["list.json", [["inc", 1]], "expected a JSON object"],
      ["number.json", 5, "expected a JSON object"],
      ["keys.json", { graph: { a: 1 }, keys: [1] }, "keys must be an array of strings"],
      ["key.json", { graph: { a: 1 }, keys: "a" }, "keys must be an array of strings"],
      ["tasks.json", { graph: { a: 1 }, tasks: [7] }, "tasks must be an array of module paths"],
    ] as const) {
      const path = file(name, JSON.stringify(content));
      await expect(loadGraphInput(path), name).rejects.toThrow(`${path}: ${said}`);
    }
  });

  it("says where JSON it cannot read went wrong, by line and column", async () => {
    // A trailing comma, the commonest slip: Node.js said neither line nor position.
    const comma = file("comma.json", '{\n  "a": ["inc", 1],\n  "b": ["inc", "a"],\n}\n');
    await expect(loadGraphInput(comma)).rejects.toThrow(
      `${comma}: cannot read the graph: Expected double-quoted property name in JSON at position 42 (line 4, column 1)`,
    );
    const quote = file("quote.json", "{\n  \"a\": ['inc', 1]\n}\n");
    await expect(loadGraphInput(quote)).rejects.toThrow(/is not valid JSON \(line 2, column 9\)$/);
  });

  it("reads a .JSON file as JSON, whatever the case of its extension", async () => {
    const path = file("upper.JSON", JSON.stringify({ a: 1 }));
    expect((await loadGraphInput(path)).graph).toEqual({ a: 1 });
  });

  it("takes a module's default export as its graph, and its keys, checked", async () => {
    const byDefault = file("default.mjs", 'export default { a: 1 };\nexport const keys = ["a"];\n');
    const input = await loadGraphInput(byDefault);
    expect(input.graph).toEqual({ a: 1 });
    expect(input.keys).toEqual(["a"]);
    const badKeys = file(
      "bad-keys.mjs",
      "export const graph = { a: 1 };\nexport const keys = [1];\n",
    );
    await expect(loadGraphInput(badKeys)).rejects.toThrow(
      `${badKeys}: keys must be an array of strings`,
    );
    const list = file("list.mjs", 'export const graph = [["inc", 1]];\n');
    await expect(loadGraphInput(list)).rejects.toThrow(`${list}: export a graph: `);
  });
});

describe("jsonFriendly", () => {
  it("turns what JSON cannot hold into what it can", () => {
    const value = {
      m: new Map<unknown, unknown>([["a", 1n]]),
      pairs: new Map<unknown, unknown>([[1, "x"]]),
      s: new Set([1, 2]),
      t: new Uint8Array([3, 4]),
      f: new Float64Array([Number.NaN, 1.5]),
      inf: [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
      u: undefined,
      e: new RangeError("too far"),
      d: new Date(0),
      ab: new Uint8Array([5, 6]).buffer,
      dv: new DataView(new Uint8Array([7, 8, 9]).buffer, 1),
      re: /ab+c/gi,
      boxed: [new Number(5), new String("hi"), new Boolean(false)],
      negz: -0,
    };
    expect(JSON.parse(JSON.stringify(jsonFriendly(value)))).toEqual({
      m: { a: "1" },
      pairs: [[1, "x"]],
      s: [1, 2],
      t: [3, 4],
      f: ["NaN", 1.5],
      inf: ["Infinity", "-Infinity"],
      u: null,
      e: "RangeError: too far",
      d: "1970-01-01T00:00:00.000Z",
      ab: [5, 6],
      dv: [8, 9],
      re: "/ab+c/gi",
      boxed: [5, "hi", false],
      negz: "-0",
    });
  });

  it("prints a reference cycle as [Circular], a value seen twice in full", () => {
    const shared = { n: 1 };
    const cyclic: Record<string, unknown> = { shared, again: [shared] };
    cyclic.self = cyclic;
    const m = new Map<string, unknown>();
    m.set("m", m);
    expect(jsonFriendly(cyclic)).toEqual({
      shared: { n: 1 },
      again: [{ n: 1 }],
      self: "[Circular]",
    });
    expect(jsonFriendly(m)).toEqual({ m: "[Circular]" });
  });
});
