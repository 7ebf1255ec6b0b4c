import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runGcScript } from "../util/testGcScript.ts";
import { ownString, ownStrings } from "./ownStrings.ts";
import { decodeMessage, encodeMessage } from "./wireCodec.ts";

const WIRE_CODEC = fileURLToPath(new URL("./wireCodec.ts", import.meta.url));

describe("ownString", () => {
  it("returns the same text, for short, long and non-ASCII strings", () => {
    for (const s of [
      "",
      "a",
      "twelve chars",
      "inc-5b1f0c7e9a2d4c3b8e6f1a0d9c8b7a6e",
      "😀 clé-ü-€-x😀yz🙂",
    ])
      expect(ownString(s)).toBe(s);
  });

  it("copies the strings of a message in place, wherever they are", () => {
    const long = (n: number): string => `a-string-long-enough-${n}`;
    const err = new Error(long(1), { cause: { why: long(2) } });
    const msg = {
      op: long(3),
      keys: [long(4), [long(5), 1]],
      m: new Map<unknown, unknown>([[[long(6)], long(7)]]),
      s: new Set([long(8), "short"]),
      err,
    };
    expect(ownStrings(msg)).toBe(msg);
    expect(msg).toEqual({
      op: long(3),
      keys: [long(4), [long(5), 1]],
      m: new Map([[[long(6)], long(7)]]),
      s: new Set([long(8), "short"]),
      err,
    });
    expect([err.message, (err.cause as { why: string }).why]).toEqual([long(1), long(2)]);
    expect(ownStrings(long(9))).toBe(long(9));
  });

  it("leaves decoded messages as they were sent", () => {
    const msg = [
      { op: "free-keys", keys: ["inc-5b1f0c7e9a2d4c3b8e6f1a0d9c8b7a6e", "x"], stimulusId: "s-1" },
      {
        m: new Map([["a-key-of-some-length", "a-value-of-some-length"]]),
        e: new Error("é".repeat(20)),
      },
    ];
    const { payload, buffers } = encodeMessage(msg);
    expect(decodeMessage(payload, buffers)).toEqual(msg);
  });
});

describe("decodeMessage", () => {
  it("gives strings that do not keep the rest of the message alive (msgpackr slices its decoded text)", () => {
    // 2,000 messages of about 5 KB, as a BatchedSend frames them; of each, one key,
    // one stimulus id, one Map key and one Map value are kept, the rest dropped.
    // So many that the heap's own drift (a few hundred KB on a loaded host: 337 bytes
    // a string over 800 strings once) is small beside what a slice would keep.
    const script = `
      import { decodeMessage, encodeMessage } from ${JSON.stringify(WIRE_CODEC)};
      const kept = [];
      const payloads = [];
      for (let b = 0; b < 2000; b++) {
        const batch = [];
        for (let i = 0; i < 40; i++)
          batch.push({
            op: "free-keys",
            keys: ["inc-" + b + "-" + i + "-5b1f0c7e9a2d4c3b8e6f"],
            stimulusId: "task-finished-" + (1764577000.1 + b * 100 + i),
            who: new Map([["tcp://10.0.0." + i + ":40123", "some-worker-name-" + b]]),
          });
        payloads.push(encodeMessage(batch).payload);
      }
      // Decoding warmed up first on a few of the same messages, so that what its first
      // calls compile is not counted as kept: unwarmed, 2-330 bytes a string from run
      // to run (a fresh-clone CI saw 347); warmed, -93 to 80; without ownStrings, 1,370-1,613.
      for (const payload of payloads.slice(0, 20)) decodeMessage(payload);
      globalThis.gc(); globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      for (const payload of payloads) {
        const m = decodeMessage(payload)[7];
        const [[address, name]] = m.who;
        kept.push(m.keys[0], m.stimulusId, address, name);
      }
      payloads.length = 0;
      globalThis.gc(); globalThis.gc();
      const after = process.memoryUsage().heapUsed;
      console.log(JSON.stringify({ kept: kept.length, bytesPerString: (after - before) / kept.length }));
    `;
    const { kept, bytesPerString } = runGcScript(script, []) as {
      kept: number;
      bytesPerString: number;
    };
    expect(kept).toBe(8000);
    // About 50 bytes a string of ~30 characters; a slice held its message's
    // decoded text, about 1,500 bytes a string here.
    expect(bytesPerString).toBeLessThan(300);
  });
});
