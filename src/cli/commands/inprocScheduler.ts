/**
 * A scheduler address `inproc://…` on a command line: only a listener of the
 * same process can answer it, and a command-line process has none (`weft
 * scheduler` refuses to listen on one), unless a test runs the command in the
 * process of its cluster. Waited for as any address is (Dask's inproc connect
 * waits for its listener too), `weft status inproc://x` waited its whole
 * `--connect-timeout`, and `weft worker inproc://x` until stopped, for what
 * can never come: refused at once instead.
 */

import { hasInprocListener } from "../../comm/inproc.ts";
import { splitScheme } from "../../util/address.ts";

/** Throws, saying why, for an `inproc://` scheduler address no listener of this process has. */
export function checkInprocScheduler(address: string): void {
  if (splitScheme(address).scheme !== "inproc" || hasInprocListener(address)) return;
  throw new Error(
    `no scheduler of this process is at ${address}: an inproc:// address reaches only one in the same process; give the scheduler's tcp:// (or tls://) address`,
  );
}
