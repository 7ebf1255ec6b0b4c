import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostTag } from "../util/scratchDirectory.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import { SpillStore } from "./spillStore.ts";

let base = "";
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "weft-spill-test-"));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** A store keeping `target` bytes of byte arrays (and 10 bytes per other value) in memory. */
function store(target: number, failed: string[] = []): SpillStore {
  return new SpillStore({
    targetBytes: target,
    directory: base,
    sizeof: (v) => (v instanceof Uint8Array ? v.byteLength : 10),
    onSpillFailed: (key) => failed.push(key),
  });
}

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

/** The files spilled now. */
function spilledFiles(): string[] {
  return readdirSync(base).flatMap((d) => readdirSync(join(base, d)));
}

/** The paths of the files spilled now. */
function spilledPaths(): string[] {
  return readdirSync(base).flatMap((d) => readdirSync(join(base, d)).map((f) => join(base, d, f)));
}

/** The error `f` throws (failing the test if it throws none). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

describe("SpillStore", () => {
  it("keeps the target in memory, spills the least recently used, reads them back", () => {
    const s = store(100);
    s.set("a", bytes(40, 1)).set("b", bytes(40, 2));
    expect(readdirSync(base)).toEqual([]); // no directory until a spill
    s.set("c", bytes(40, 3));
    expect(s.stats).toMatchObject({ memoryKeys: 2, memoryBytes: 80, spilledKeys: 1 });
    expect(spilledFiles()).toHaveLength(1);
    // a went to disk (least recently used); reading it back spills b, now the oldest.
    expect(s.get("a")).toEqual(bytes(40, 1));
    expect(s.stats).toMatchObject({ memoryBytes: 80, spilledBytes: 40, spillCount: 2 });
    expect(s.stats.unspillCount).toBe(1);
    // A read makes a value recent: c survives the next spill, a does not.
    s.get("c");
    s.set("d", bytes(40, 4));
    expect(s.get("b")).toEqual(bytes(40, 2));
    expect([...s.keys()].sort()).toEqual(["a", "b", "c", "d"]);
    expect(s.size).toBe(4);
    for (const [k, fill] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
      ["d", 4],
    ] as const) {
      expect(s.get(k)).toEqual(bytes(40, fill));
    }
    expect(s.stats.memoryBytes).toBeLessThanOrEqual(100);
  });

  it("a small array read back beside a large one does not keep the whole file's bytes allocated", () => {
    const s = store(5); // counted 10 bytes: straight to disk
    s.set("v", { small: bytes(3, 1), big: bytes(1_600_000, 2) });
    expect(spilledFiles()).toHaveLength(1);
    const got = s.get("v") as { small: Uint8Array; big: Uint8Array };
    expect(got.small).toEqual(bytes(3, 1));
    expect(got.small.buffer.byteLength).toBe(3);
    expect(Buffer.from(got.big).equals(Buffer.from(bytes(1_600_000, 2)))).toBe(true);
  });

  it("evictOne spills the least recently used value that can be, until none can", () => {
    const failed: string[] = [];
    const s = store(1000, failed);
    s.set("a", bytes(30, 1))
      .set("f", () => 0)
      .set("b", bytes(20, 2));
    s.get("a"); // now b is the least recently used byte array
    // f is older still, but a function cannot be serialised: b goes.
    expect(s.evictOne()).toBe(20);
    expect(failed).toEqual(["f"]);
    expect(s.stats).toMatchObject({ memoryKeys: 2, spilledKeys: 1, spillFailures: 1 });
    expect(s.evictOne()).toBe(30);
    expect(s.evictOne()).toBe(-1); // only f is left, not tried again
    expect(failed).toEqual(["f"]);
    expect(s.stats).toMatchObject({ memoryKeys: 1, memoryBytes: 10, spilledBytes: 50 });
    expect(s.get("b")).toEqual(bytes(20, 2));
    s.close();
    expect(s.evictOne()).toBe(-1);
  });

  it("a value larger than the target goes straight to disk; delete and close free the files", () => {
    const s = store(100);
    s.set("big", bytes(500, 7));
    expect(s.stats).toMatchObject({ memoryKeys: 0, spilledKeys: 1, spilledBytes: 500 });
    s.set("small", bytes(10, 1));
    // Read, it stays on disk (as zict's buffer leaves a heavy value): in memory it
    // would sit above the target alone, and nothing else is moved for it.
    expect(s.get("big")).toEqual(bytes(500, 7));
    expect(s.get("big")).toEqual(bytes(500, 7));
    expect(s.stats).toMatchObject({
      memoryKeys: 1,
      memoryBytes: 10,
      spilledKeys: 1,
      spilledBytes: 500,
      spillCount: 1,
      unspillCount: 2,
    });
    expect(spilledFiles()).toHaveLength(1);
    expect(s.delete("big")).toBe(true);
    expect(s.delete("big")).toBe(false);
    expect(s.has("big")).toBe(false);
    expect(spilledFiles()).toEqual([]);
    s.set("big2", bytes(500, 8));
    // Setting a key anew replaces its value, wherever it was.
    s.set("big2", bytes(5, 9));
    expect(s.get("big2")).toEqual(bytes(5, 9));
    expect(spilledFiles()).toEqual([]);
    s.set("big3", bytes(500, 1));
    s.close();
    expect(readdirSync(base)).toEqual([]);
    // The keys are still listed (the worker's state machine does), but cannot be read.
    expect(s.size).toBe(3);
    expect(() => s.get("big3")).toThrow("SpillStore: closed; big3 was on disk");
    expect(s.get("small")).toEqual(bytes(10, 1));
  });

  it("a value that cannot be serialised stays in memory; too large, set throws", () => {
    const failed: string[] = [];
    const s = store(25, failed);
    const fn = { run: () => 1 };
    s.set("fn", fn);
    s.set("x", bytes(20, 1)); // over the target: fn cannot go, x is the one just set
    expect(failed).toEqual(["fn"]);
    expect(s.get("fn")).toBe(fn);
    expect(s.stats).toMatchObject({ spillFailures: 1, memoryKeys: 2 });
    s.set("y", bytes(20, 2)); // x goes; fn is not tried again
    expect(failed).toEqual(["fn"]);
    expect(s.stats.spilledKeys).toBe(1);
    const tooBig = new SpillStore({
      targetBytes: 5,
      directory: base,
      sizeof: () => 10,
    });
    expect(() => tooBig.set("f", { run: () => 1 })).toThrow(/could not be cloned/);
    expect(tooBig.has("f")).toBe(false);
    expect(() => new SpillStore({ targetBytes: -1, directory: base, sizeof: () => 1 })).toThrow(
      RangeError,
    );
    expect(existsSync(base)).toBe(true);
  });

  it("the first spill removes the directories of processes no longer running", () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
    mkdirSync(join(base, `weft-spill-${dead}-abc`));
    mkdirSync(join(base, `weft-spill-${process.pid}-mine`));
    mkdirSync(join(base, "other"));
    // Another machine's, or another container's (a shared base): not this one's to judge.
    mkdirSync(join(base, `weft-spill-${dead}-otherhost_4026531836-Xy12ab`));
    mkdirSync(join(base, `weft-spill-${dead}-${hostTag()}-Ab34cd`)); // this host's: removed
    const s = store(10);
    s.set("x", bytes(20, 1));
    const left = readdirSync(base).sort();
    expect(left).toHaveLength(4);
    expect(left).toContain(`weft-spill-${dead}-otherhost_4026531836-Xy12ab`);
    expect(left).toContain(`weft-spill-${process.pid}-mine`);
    expect(left).toContain("other");
    expect(
      left.some(
        (d) => d.startsWith(`weft-spill-${process.pid}-`) && d !== `weft-spill-${process.pid}-mine`,
      ),
    ).toBe(true);
    expect(left).not.toContain(`weft-spill-${dead}-abc`);
    expect(left).not.toContain(`weft-spill-${dead}-${hostTag()}-Ab34cd`);
  });

  it("keeps in memory a value of exactly the target", () => {
    const s = store(10);
    s.set("a", bytes(10, 1));
    expect(s.stats).toMatchObject({
      memoryKeys: 1,
      memoryBytes: 10,
      spilledKeys: 0,
      spillCount: 0,
    });
  });

  it("reads back into memory a spilled value of exactly the target", () => {
    const s = store(10);
    s.set("a", bytes(10, 1)).set("b", bytes(1, 2)); // a, the least recently used, spilled
    expect(s.stats).toMatchObject({ memoryKeys: 1, spilledKeys: 1 });
    expect(s.get("a")).toEqual(bytes(10, 1));
    // a back in memory, b spilled to make room for it.
    expect(s.stats).toMatchObject({ memoryKeys: 1, memoryBytes: 10, spilledKeys: 1 });
    expect(s.get("a")).toEqual(bytes(10, 1));
    expect(s.stats.unspillCount).toBe(1);
  });

  it("stops spilling once memory is back at exactly the target", () => {
    const s = store(10);
    s.set("a", bytes(5, 1)).set("b", bytes(5, 2)).set("c", bytes(5, 3));
    expect(s.stats).toMatchObject({ memoryKeys: 2, memoryBytes: 10, spilledKeys: 1 });
  });

  it("tries again to spill a key set anew after its value could not be", () => {
    const failed: string[] = [];
    const s = store(20, failed);
    s.set("a", () => 1); // a function cannot be serialised: 10 bytes that stay
    s.set("b", bytes(15, 1));
    expect(failed).toEqual(["a"]);
    s.set("a", bytes(10, 2)); // now a value that can be; b spilled to make room
    expect(s.evictOne()).toBe(10);
    expect(s.stats).toMatchObject({ memoryKeys: 0, spilledKeys: 2, spillFailures: 1 });
  });

  it("a failed write keeps values in memory, is told once a run, and is tried again", () => {
    const failed: string[] = [];
    const missing = join(base, "not-yet"); // the disk failing: no directory to write in
    const s = new SpillStore({
      targetBytes: 20,
      directory: missing,
      sizeof: (v) => (v instanceof Uint8Array ? v.byteLength : 10),
      onSpillFailed: (key) => failed.push(key),
    });
    s.set("a", bytes(15, 1));
    s.set("b", bytes(15, 2)); // a cannot go: both stay
    s.set("c", bytes(30, 3)); // over the target on its own: kept in memory, not thrown
    expect(failed).toEqual(["a"]);
    expect(s.stats).toMatchObject({ memoryKeys: 3, spilledKeys: 0, spillFailures: 2 });
    expect(s.evictOne()).toBe(-2); // the write failed: not "nothing to spill"
    expect(failed).toEqual(["a"]);
    mkdirSync(missing);
    // The disk takes them again: a, then b, are spilled as any other value.
    expect(s.evictOne()).toBe(15);
    s.set("d", bytes(5, 4));
    expect(s.stats).toMatchObject({ memoryKeys: 1, spilledKeys: 3, spillFailures: 3 });
    expect([s.get("a"), s.get("c")]).toEqual([bytes(15, 1), bytes(30, 3)]);
    rmSync(missing, { recursive: true });
    s.set("e", bytes(15, 5)); // failing again: told again, the first of a new run
    expect(failed).toEqual(["a", "d"]);
    expect(s.stats).toMatchObject({ memoryKeys: 3, spillFailures: 4 });
  });

  it("evicts nothing once closed, and counts no failure for it", () => {
    const failed: string[] = [];
    const s = store(100, failed);
    s.set("a", bytes(10, 1));
    s.close();
    expect(s.evictOne()).toBe(-1);
    expect(failed).toEqual([]);
    expect(s.stats).toMatchObject({ memoryKeys: 1, spillFailures: 0 });
  });

  describe("a value whose file is gone or damaged", () => {
    const damages = {
      removed: (f: string) => rmSync(f),
      "cut short": (f: string) => truncateSync(f, 5),
      "added to": (f: string) => writeFileSync(f, "x", { flag: "a" }),
      // Still decodes, to another value: only the checksum tells.
      "a byte changed": (f: string) => {
        const b = readFileSync(f);
        b[b.length - 1] ^= 1;
        writeFileSync(f, b);
      },
      "not decodable": (f: string) => writeFileSync(f, Buffer.alloc(4000, 0xff)),
    };
    for (const [how, damage] of Object.entries(damages)) {
      it(`is lost, naming the key and the file, until deleted or set anew (${how})`, () => {
        const s = store(100);
        s.set("big", bytes(4000, 7)).set("small", bytes(10, 1));
        const [file] = spilledPaths();
        damage(file);
        const err = thrown(() => s.get("big"));
        expect(err).toBeInstanceOf(SpilledValueLostError);
        const lost = err as SpilledValueLostError;
        expect(lost.key).toBe("big");
        expect(lost.file).toBe(file);
        expect(lost.message).toContain(`the spilled value of "big" is gone from disk: ${file} `);
        if (how === "removed") expect(lost.message).toMatch(/ was removed$/);
        else expect(lost.message).toMatch(/ is damaged \(/);
        // Still listed, as the worker's state machine holds it until it drops it; each
        // get throws the same, without touching the disk, and the damaged file is gone.
        expect(s.has("big")).toBe(true);
        expect([...s.keys()].sort()).toEqual(["big", "small"]);
        expect(s.size).toBe(2);
        expect(s.isLost("big")).toBe(true);
        expect(thrown(() => s.get("big"))).toBe(err);
        expect(s.stats).toMatchObject({ spilledKeys: 0, spilledBytes: 0, lostKeys: 1 });
        expect(s.stats.unspillCount).toBe(0);
        expect(spilledPaths()).toEqual([]);
        expect(s.get("small")).toEqual(bytes(10, 1));
        // Set anew, it is an ordinary value again; deleted, it is gone.
        s.set("big", bytes(4000, 8));
        expect(s.isLost("big")).toBe(false);
        expect(s.get("big")).toEqual(bytes(4000, 8));
        rmSync(spilledPaths()[0]);
        expect(() => s.get("big")).toThrow(SpilledValueLostError);
        expect(s.delete("big")).toBe(true);
        expect(s.has("big")).toBe(false);
        expect(s.get("big")).toBeUndefined();
        expect(s.delete("big")).toBe(false);
        expect(s.stats.lostKeys).toBe(0);
      });
    }

    it("a file the disk cannot read is lost with the file system's code", () => {
      const s = store(100);
      s.set("big", bytes(4000, 7));
      const [file] = spilledPaths();
      // A directory where the file was: reading it fails with EISDIR, as a failing disk's EIO would.
      rmSync(file);
      mkdirSync(file);
      const err = thrown(() => s.get("big")) as SpilledValueLostError;
      expect(err).toBeInstanceOf(SpilledValueLostError);
      expect(err.message).toMatch(/ could not be read \(EISDIR: /);
      expect((err.cause as { code?: string }).code).toBe("EISDIR");
    });

    it("its directory removed whole (rm -rf /tmp/*), the next spill makes another", () => {
      const failed: string[] = [];
      const s = store(100, failed);
      s.set("a", bytes(4000, 1));
      const [first] = readdirSync(base);
      rmSync(join(base, first), { recursive: true });
      expect(() => s.get("a")).toThrow(SpilledValueLostError);
      // Spilling goes on, in a directory of its own again, rather than failing for good.
      s.set("b", bytes(4000, 2));
      expect(failed).toEqual([]);
      expect(s.stats).toMatchObject({ spilledKeys: 1, spillFailures: 0, lostKeys: 1 });
      const [second] = readdirSync(base);
      expect(second).not.toBe(first);
      expect(s.get("b")).toEqual(bytes(4000, 2));
      s.close();
      expect(readdirSync(base)).toEqual([]);
    });

    it("a value read back into memory before its file went is not lost", () => {
      const s = store(100);
      s.set("a", bytes(40, 1)).set("b", bytes(40, 2)).set("c", bytes(40, 3));
      expect(s.get("a")).toEqual(bytes(40, 1)); // back in memory, b spilled
      for (const f of spilledPaths()) rmSync(f);
      expect(s.get("a")).toEqual(bytes(40, 1));
      expect(s.get("c")).toEqual(bytes(40, 3));
      expect(() => s.get("b")).toThrow(
        /the spilled value of "b" is gone from disk: .* was removed$/,
      );
    });
  });
});
