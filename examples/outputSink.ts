/** For the examples' tests: a stream an example writes its output to, and the text written so far. */

import { PassThrough } from "node:stream";

/** A writable stream collecting what is written to it, and a reader of that text. */
export function outputSink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}
