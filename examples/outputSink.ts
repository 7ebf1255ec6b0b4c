/** For the examples' tests: a stream an example writes its output to, and the text written so far. */

import { PassThrough } from "node:stream";
import type { ExampleOutput } from "./exampleCli.ts";

/** A writable stream collecting what is written to it, and a reader of that text. */
export function outputSink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}

/** What an example's command line did: its exit code, and what it wrote to stdout and stderr. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Run an example's `cli(argv, out)` with `argv`, its output collected. */
export async function runCli(
  cli: (argv: readonly string[], out: ExampleOutput) => Promise<number>,
  ...argv: string[]
): Promise<CliRun> {
  const stdout = outputSink();
  const stderr = outputSink();
  const code = await cli(argv, { stdout: stdout.stream, stderr: stderr.stream });
  return { code, out: stdout.text(), err: stderr.text() };
}
