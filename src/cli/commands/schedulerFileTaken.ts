/**
 * `weft scheduler --scheduler-file FILE` where FILE names a scheduler still running:
 * a second scheduler given the same path by mistake (a job script run twice, a
 * scheduler started again while the first was not stopped) wrote its own address
 * over the first's, sending the workers and clients that read the file later
 * (nannies' workers started again, a restart's) to it; closing, it removed the file,
 * and they then waited for a file that never came back, the first scheduler still
 * running. So a file that names an address accepting connections is refused; one
 * whose address refuses them, or cannot be reached, is a scheduler gone (SIGKILLed,
 * its machine lost) and is replaced, as before. Dask's scheduler writes over the
 * file whatever it names.
 */

import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import { parseAddress } from "../../util/address.ts";
import { deviceProblem } from "../../util/regularFile.ts";
import { addressIn, readSchedulerFile } from "../../util/schedulerFile.ts";

/** How long the address a scheduler file names is given to accept a connection. */
const PROBE_MS = 2_000;

/**
 * The address of the scheduler the file at `path` names, if that address accepts a
 * TCP connection within `probeMs`; null when there is no file, it is no scheduler
 * file ({@link notSchedulerFileMessage} says so), or its address refuses connections, cannot
 * be reached or does not answer in time. Only the TCP connection is made (a `tls://`
 * address needs no credentials for it), and closed at once.
 */
export async function runningSchedulerIn(
  path: string,
  probeMs: number = PROBE_MS,
): Promise<string | null> {
  let address: string;
  let host: string;
  let port: number;
  try {
    address = await readSchedulerFile(path, { timeoutMs: 0 });
    ({ host, port } = parseAddress(address));
  } catch {
    return null;
  }
  const accepted = await new Promise<boolean>((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(probeMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
  return accepted ? address : null;
}

/**
 * The text of the file at `path` (a symlink followed), null when there is none or it
 * cannot be read: looked at again once the scheduler listens, to tell whether another
 * scheduler wrote the file while this one started.
 */
export async function schedulerFileText(path: string): Promise<string | null> {
  // Unread, a FIFO waiting for a writer, /dev/zero without end: writing it says what it is.
  if ((await deviceProblem(path)) !== null) return null;
  return readFile(path, "utf8").catch(() => null);
}

/**
 * Why the file at `path`, holding `text` (null: none there), is not to be written over
 * though it names no scheduler running: it is no scheduler file (a file of the user's
 * given by mistake), which writing, then removing as the scheduler closes, would lose.
 * Null for none, an empty one (made ahead by a job script), or a scheduler file.
 */
export function notSchedulerFileMessage(path: string, text: string | null): string | null {
  if (text === null || text.trim() === "") return null;
  try {
    addressIn(path, text);
    return null;
  } catch (err) {
    return `${(err as Error).message}: written over, what it holds would be lost. Give another --scheduler-file, or remove it`;
  }
}

/** Why `weft scheduler` does not start with the scheduler file at `path`, naming `address`. */
export function schedulerFileTakenMessage(path: string, address: string): string {
  return (
    `the scheduler file ${path} names a scheduler still running at ${address} (it accepts connections): ` +
    `written over, its workers and clients would come to this one. Stop that scheduler first, ` +
    `or give another --scheduler-file (if what listens at ${address} is no scheduler of yours, remove the file)`
  );
}
