/**
 * Scheduler files (Dask's `--scheduler-file`): the scheduler writes its
 * identity, its address among it, to a JSON file on a filesystem its workers
 * and clients share, and they read the address from it, waiting for the file
 * if the scheduler has not written it yet. On a batch system the scheduler's
 * host and port are known only once it runs: the job script passes a path
 * instead.
 */

import { link, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { warnCallbackFailed } from "./callbackWarning.ts";
import { callGuarded } from "./guardedCall.ts";
import { hiddenName, removeHiddenLeftovers } from "./hiddenLeftovers.ts";
import { checkKnownOptions, type OptionNames } from "./knownOptions.ts";
import { outputFailure } from "./outputFile.ts";
import { deviceProblem } from "./regularFile.ts";
import { showValue } from "./showValue.ts";
import { followedPath, replaceWholeFile } from "./wholeFile.ts";

/** What a scheduler file holds (Dask's `Scheduler.identity()`, with the fields weft has). */
export interface SchedulerFileContent {
  /** Always `"Scheduler"`, as in Dask's identity. */
  readonly type: "Scheduler";
  /**
   * The scheduler's ID (`Scheduler-<uuid>`): a scheduler removes the file on exit only if it still
   * names it.
   */
  readonly id: string;
  /** The address workers and clients connect to. */
  readonly address: string;
  /** The HTTP endpoints' port (`--http-address`), if served. */
  readonly services: Readonly<Record<string, number>>;
  /** When the scheduler started, in wall-clock seconds. */
  readonly started: number;
  /** Always empty here (Dask lists the workers; a file written at start has none). */
  readonly workers: Readonly<Record<string, never>>;
}

/**
 * Write `content` to `path` as indented JSON, whole or not at all (a reader
 * never sees half a file): written beside it, then renamed over it, never written
 * in place ({@link replaceWholeFile}). The hidden partial file is removed should
 * SIGINT or SIGTERM end `weft` meanwhile (see partialFiles.ts).
 */
export async function writeSchedulerFile(
  path: string,
  content: SchedulerFileContent,
): Promise<void> {
  try {
    await replaceWholeFile(path, `${JSON.stringify(content, null, 2)}\n`);
  } catch (err) {
    // Said of the path given: replaceWholeFile names it in place of the hidden partial
    // file's name in Node's message, but a directory that looks writable and is not
    // (/proc, a read-only mount) is said of the directory, and a rename's `EISDIR` as
    // "it is a directory"; a device or a FIFO, in its words ("it is a FIFO (named pipe), …").
    // Of the file a symlink names: a link to a file in a directory not there names that
    // one, and a directory that takes no file is the one the link leads to, not its own.
    const followed = await followedPath(path).catch(() => path);
    const code = (err as NodeJS.ErrnoException).code;
    // Said as the system says it ("cannot write it (ELOOP)" named no link).
    const failure =
      code === "ELOOP"
        ? { why: "too many levels of symbolic links: they loop, or chain past 40 (ELOOP)" }
        : await outputFailure(followed);
    const why =
      failure?.why ??
      (code === undefined || code === "ENOTREGULAR"
        ? (err as Error).message
        : code === "EBUSY"
          ? // A rename's: said of the directory, it hid that the file itself cannot be replaced.
            `it is a mount point (a file bind-mounted into a container?), which the file written beside it cannot replace (EBUSY): give a path in a directory mounted whole`
          : `cannot write in ${dirname(resolve(followed))} (${code})`);
    throw new Error(`cannot write the scheduler file ${path}: ${why}`);
  }
  await followedPath(path).then(removeLeftovers, () => {});
}

/**
 * Remove the hidden files {@link removeSchedulerFile} renamed the scheduler file at
 * `path` to and a process killed meanwhile (`kill -9`) left beside it, now that a
 * new file is there. Only those renamed aside before it was written (an earlier
 * change time): one renamed after may be the new file itself, which a closing
 * scheduler renamed aside to read it and will put back. One renamed before held a
 * file the new one replaced, which its closing scheduler (if alive still) would
 * remove, or find the new file in the way of putting it back and remove.
 */
async function removeLeftovers(path: string): Promise<void> {
  await removeHiddenLeftovers(path, "removed", (aside, written) => aside.ctimeMs < written.ctimeMs);
}

/**
 * Remove the scheduler file at `path` if it still names the scheduler `id`
 * (another scheduler may have written its own there since). A file read as ours
 * and then removed by its path could be another scheduler's by then, renamed over
 * the path between the two steps, which lost its file: so the file is first renamed
 * to a hidden name beside it, read there, and removed only if it is ours; another's
 * is put back, unless a newer one took the path meanwhile. A reader polling the path
 * finds no file for that instant, and waits, as for a scheduler not started yet.
 * A symlink is followed, as {@link writeSchedulerFile} follows it: the file it names
 * is the one written, and removed; the link is the user's, and stays.
 *
 * `beforeRemoval` runs between the first look and the removal: for tests alone, to
 * write another scheduler's file there at that moment.
 */
export async function removeSchedulerFile(
  given: string,
  id: string,
  beforeRemoval?: () => Promise<void>,
): Promise<void> {
  if ((await deviceProblem(given)) !== null) return;
  // Another's file (the common case when a second scheduler took the path) is left
  // untouched: never renamed away, not even for an instant.
  if (!(await namesScheduler(given, id))) return;
  // The file a symlink names, which is the file written: the link is the user's.
  const path = await followedPath(given);
  await beforeRemoval?.();
  const hidden = join(dirname(path), hiddenName(path, "removed"));
  try {
    await rename(path, hidden);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return; // gone already
    // Left, it names a scheduler gone: a worker started with it waits on a dead address.
    throw new Error(
      `cannot remove the scheduler file ${given}: ${removalFailure(path, code)}; remove it by hand`,
    );
  }
  if (await namesScheduler(hidden, id)) {
    await rm(hidden, { force: true });
    return;
  }
  await putBack(hidden, path);
}

/** Why the file at `path` could not be renamed aside, in the words of the error `code`. */
function removalFailure(path: string, code: string | undefined): string {
  const dir = dirname(path);
  if (code === "EACCES" || code === "EPERM") return `${dir} does not allow it (${code})`;
  if (code === "EROFS") return `${dir} is on a read-only file system (EROFS)`;
  return `cannot rename it in ${dir} (${code ?? "UNKNOWN"})`;
}

/** Whether the file at `path` is a scheduler file naming the scheduler `id`. */
async function namesScheduler(path: string, id: string): Promise<boolean> {
  const text = await readFile(path, "utf8").catch(() => null);
  if (text === null) return false;
  try {
    return (JSON.parse(text) as { id?: unknown } | null)?.id === id;
  } catch {
    return false;
  }
}

/**
 * Put another scheduler's file, renamed to `hidden`, back at `path`: by a link,
 * which fails if a newer file took the path meanwhile (that one stays); by a rename
 * on a file system without hard links.
 */
async function putBack(hidden: string, path: string): Promise<void> {
  try {
    await link(hidden, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      await rename(hidden, path).catch(() => {});
      return;
    }
  }
  await rm(hidden, { force: true });
}

/** Options of {@link readSchedulerFile}. */
export interface ReadSchedulerFileOptions {
  /**
   * How long to wait for the file to appear, in ms. Default 30,000; 0: not at
   * all; `Infinity`: until `signal` aborts.
   */
  readonly timeoutMs?: number;
  /** How often to look for it meanwhile, in ms. Default 100. */
  readonly pollMs?: number;
  /**
   * Called once, at once, when the file is not there at the first look and
   * will be waited for: the caller says that it waits. What it throws, or a
   * rejection of the promise it returns (seen at the next look), rejects the
   * call.
   */
  readonly onWaiting?: () => void;
  /**
   * Ends the wait when aborted (the caller is closing: a signal, a user who
   * gave up): the promise then rejects with `signal.reason` (an `AbortError`
   * unless the caller gave its own), as Node's own APIs do.
   */
  readonly signal?: AbortSignal;
}

/** Every option of {@link ReadSchedulerFileOptions}: others are refused. */
const READ_OPTIONS: OptionNames<ReadSchedulerFileOptions> = {
  timeoutMs: true,
  pollMs: true,
  onWaiting: true,
  signal: true,
};

/**
 * The scheduler's address in the scheduler file at `path`, once the file is
 * there: waits up to `timeoutMs` (default 30,000) for it to appear, or until
 * `signal` aborts. Rejects with a clear error for a file that is not a
 * scheduler file, or none in time.
 */
export async function readSchedulerFile(
  path: string,
  options: ReadSchedulerFileOptions = {},
): Promise<string> {
  if (typeof path !== "string" || path === "") {
    throw new TypeError(
      `readSchedulerFile: the path must be a non-empty string, got ${showValue(path)}`,
    );
  }
  // Or null read as "Cannot read properties of null", and a misspelt `timeout` waited 30 s.
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`readSchedulerFile: options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions("readSchedulerFile", options, READ_OPTIONS);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pollMs = options.pollMs ?? 100;
  if (!(typeof timeoutMs === "number" && timeoutMs >= 0)) {
    throw new RangeError(
      `readSchedulerFile: timeoutMs must be a number of ms >= 0 (or Infinity), got ${showValue(timeoutMs)}`,
    );
  }
  if (!(typeof pollMs === "number" && pollMs > 0 && Number.isFinite(pollMs))) {
    throw new RangeError(
      `readSchedulerFile: pollMs must be a finite number of ms > 0, got ${showValue(pollMs)}`,
    );
  }
  const { signal, onWaiting } = options;
  // Else "signal?.throwIfAborted is not a function", or, once the file was found
  // missing, "options.onWaiting is not a function", naming no option.
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(
      `readSchedulerFile: signal must be an AbortSignal, got ${showValue(signal)}`,
    );
  }
  if (onWaiting !== undefined && typeof onWaiting !== "function") {
    throw new TypeError(
      `readSchedulerFile: onWaiting must be a function, got ${showValue(onWaiting)}`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  let told = false;
  /** What `onWaiting` threw, or its promise rejected with: the call rejects with it. */
  let waitingFailed: { readonly err: unknown } | null = null;
  const throwIfWaitingFailed = () => {
    if (waitingFailed !== null) throw waitingFailed.err;
  };
  let over = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      throwIfWaitingFailed();
      // A link to /dev/zero was read forever, a FIFO until some process wrote to it.
      const device = await deviceProblem(path);
      if (device !== null) throw new Error(`cannot read the scheduler file ${path}: ${device}`);
      let text: string | null = null;
      try {
        text = await readFile(path, "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
          throw new Error(`cannot read the scheduler file ${path}: ${(err as Error).message}`);
        }
      }
      if (text !== null) return addressIn(path, text);
      if (Date.now() >= deadline) {
        throw new Error(
          `no scheduler file at ${path} after ${timeoutMs} ms (is the scheduler started with --scheduler-file?)`,
        );
      }
      if (!told) {
        told = true;
        // Its promise's rejection too: dropped, it was an unhandled rejection.
        callGuarded(
          () => onWaiting?.(),
          (err) => {
            // Once the call is over (the file came), only a warning can tell of it.
            if (over) warnCallbackFailed("readSchedulerFile onWaiting failed", err);
            else waitingFailed = { err };
          },
        );
        throwIfWaitingFailed();
      }
      try {
        await sleep(pollMs, undefined, { signal });
      } catch (err) {
        signal?.throwIfAborted(); // its own reason, not the timer's AbortError
        throw err;
      }
    }
  } finally {
    over = true;
  }
}

/**
 * The address the scheduler file at `path`, holding `text`, gives; throws, saying what
 * is wrong, for one that is not JSON or gives none.
 */
export function addressIn(path: string, text: string): string {
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (err) {
    throw new Error(`the scheduler file ${path} is not JSON: ${(err as Error).message}`);
  }
  const address = (content as { address?: unknown } | null)?.address;
  if (typeof address !== "string" || address === "") {
    throw new Error(`the scheduler file ${path} gives no address (a string field "address")`);
  }
  return address;
}
