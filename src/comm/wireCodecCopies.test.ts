import { describe, expect, it } from "vitest";
import { ClonedValue } from "./clonedValue.ts";
import { ForwardedBytes } from "./forwardedBytes.ts";
import { decodeMessage, encodeMessage, OUT_OF_BAND_MIN_BYTES } from "./wireCodec.ts";

/**
 * A second copy of the codec in the process, as when the checkout's `weft` command
 * (run from the sources) imports a task module that imports the built package, or
 * two installed versions of weft share one msgpackr: msgpackr's extensions are
 * process-wide, and the copy imported last registered the unpacking of its own.
 */
async function importSecondCopy(): Promise<typeof import("./wireCodec.ts")> {
  return (await import(
    /* @vite-ignore */ `./wireCodec.ts?second-copy=${Date.now()}`
  )) as typeof import("./wireCodec.ts");
}

describe("the wire codec beside another copy of itself", () => {
  it("each copy reads the large byte arrays and cloned values of its own messages", async () => {
    const second = await importSecondCopy();
    expect(second.decodeMessage).not.toBe(decodeMessage);
    const big = new Uint8Array(OUT_OF_BAND_MIN_BYTES + 1).fill(7);
    const pairs = [
      [encodeMessage, decodeMessage],
      [second.encodeMessage, second.decodeMessage],
      [encodeMessage, second.decodeMessage],
      [second.encodeMessage, decodeMessage],
    ] as const;
    for (const [encode, decode] of pairs) {
      const { payload, buffers } = encode({ op: "compute-task", args: [big, 5] });
      // Before, the first copy read the argument as null, without an error: the
      // unpacking registered last looked for it among the second copy's buffers.
      expect((decode(payload, buffers) as { args: unknown[] }).args).toEqual([big, 5]);
    }
    for (const [encode, decode] of pairs) {
      const { payload, buffers } = encode({ result: new ClonedValue({ a: [1, 2] }) });
      const out = decode(payload, buffers) as { result: ClonedValue };
      expect(out.result.value).toEqual({ a: [1, 2] });
    }
    // A forwarding decoder (the scheduler's) passes the bytes on unread.
    const { payload, buffers } = encodeMessage({ args: [big] });
    const fwd = decodeMessage(payload, buffers, { forward: true }) as { args: unknown[] };
    expect(fwd.args[0]).toBeInstanceOf(ForwardedBytes);
    const again = encodeMessage(fwd);
    expect((decodeMessage(again.payload, again.buffers) as { args: unknown[] }).args).toEqual([
      big,
    ]);
  });
});
