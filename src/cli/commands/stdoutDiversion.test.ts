/**
 * A diverted stdout passes on the backpressure of the stream it is diverted to:
 * a writer that waits for `drain` (a pool thread's stdout, piped in by Node.js)
 * is held back while that stream's reader lags, rather than buffered here.
 */

import { PassThrough, Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { divertStdout } from "./stdoutDiversion.ts";

/** A stream whose writes complete only when `release()` is called: a reader that lags. */
class HeldSink extends Writable {
  text = "";
  private held: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 1024, decodeStrings: false });
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    this.held.push(done);
  }
  /** Complete the write under way (a Writable hands over the next once it is done). */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const done of held) done();
  }
  /** Complete every write waiting, as a reader catching up. */
  catchUp(): void {
    while (this.held.length > 0) this.release();
  }
}

/** A stdout to divert: what reaches it past the diversion is kept. */
function fakeStdout(): PassThrough & { text: string } {
  const s = Object.assign(new PassThrough(), { text: "" });
  s.on("data", (d: Buffer) => {
    s.text += d.toString();
  });
  return s;
}

const KB = "x".repeat(1023);

describe("divertStdout", () => {
  it("a diverted write says what the diverted-to stream's write says, and drain comes once that stream drains", async () => {
    const stdout = fakeStdout();
    const to = new HeldSink();
    const diversion = divertStdout(stdout, to);
    try {
      expect(stdout.write("a\n")).toBe(true);
      // Before, every write was reported taken whatever was waiting behind it.
      expect(stdout.write(`${KB}\n`)).toBe(false);
      expect(stdout.write(`${KB}\n`)).toBe(false);
      let drained = 0;
      stdout.on("drain", () => drained++);
      // Waiting for drain twice adds one listener, not one per write.
      expect(to.listenerCount("drain")).toBe(1);
      to.catchUp();
      await new Promise((resolve) => setImmediate(resolve));
      expect(drained).toBe(1);
      expect(to.listenerCount("drain")).toBe(0);
      expect(to.text).toBe(`a\n${KB}\n${KB}\n`);
      expect(stdout.text).toBe("");
    } finally {
      diversion.restore();
    }
  });

  it("a stream piped into the diverted stdout is held back while the reader lags, and loses nothing", async () => {
    const stdout = fakeStdout();
    const to = new HeldSink();
    const diversion = divertStdout(stdout, to);
    try {
      const lines = Array.from({ length: 500 }, (_, i) => `${i} ${KB}\n`);
      const source = Readable.from(lines, { objectMode: false });
      source.pipe(stdout);
      let most = 0;
      let ended = false;
      source.on("end", () => {
        ended = true;
      });
      // The reader takes what is waiting at each turn; the source gives what it may.
      while (!ended || to.writableLength > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        most = Math.max(most, to.writableLength);
        to.release();
      }
      // Before, the whole half megabyte waited at once in the stream diverted to.
      expect(most).toBeLessThan(16 * 1024);
      expect(to.text).toBe(lines.join(""));
      expect(stdout.text).toBe("");
    } finally {
      diversion.restore();
    }
  });

  it("a diverted-to stream that is closed (stderr's reader gone) does not hold the writer for good", async () => {
    const stdout = fakeStdout();
    const to = new HeldSink();
    const diversion = divertStdout(stdout, to);
    try {
      expect(stdout.write(`${KB}\n${KB}\n`)).toBe(false);
      const drained = new Promise((resolve) => stdout.once("drain", resolve));
      to.destroy();
      await drained;
      // Its writes go nowhere: taken, so that a pipe into it goes on to its end.
      expect(stdout.write("after\n")).toBe(true);
    } finally {
      diversion.restore();
    }
  });

  it("writes past the diversion reach the stream itself, and restore gives it its own writes back", () => {
    const stdout = fakeStdout();
    const to = new HeldSink();
    const diversion = divertStdout(stdout, to);
    diversion.write(stdout, "answer\n");
    stdout.write("diverted\n");
    diversion.restore();
    stdout.write("own\n");
    expect(stdout.text).toBe("answer\nown\n");
    expect(to.text).toBe("diverted\n");
  });
});
