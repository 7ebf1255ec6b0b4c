/**
 * The scheduler's record of the files clients upload (`Client.uploadFile`),
 * which every worker registering from then on saves and imports first. A file
 * is recorded once every worker there has it: the client asks them, then asks
 * for the record naming them, and a worker that registered meanwhile and was
 * not asked keeps the file from being recorded until it is, so that a worker
 * that could not take it never leaves the file kept for the workers to come.
 */

import { ForwardedBytes } from "../comm/forwardedBytes.ts";
import {
  sameBytes,
  type UploadedFile,
  uploadConflict,
  uploadedFileProblem,
} from "../protocol/uploads.ts";
import { RequestRefusal } from "./requestRefusal.ts";

/** The answer to an `upload-file` naming the workers asked, when some others are there: nothing recorded. */
export interface UploadUnasked {
  /** The workers the scheduler has that the client did not name as having the file. */
  readonly unasked: readonly string[];
}

/**
 * Record the file of `msg` (an `upload-file` request) in `uploads`, unless one
 * of `workers` (those the scheduler has) is not in its `asked` list, when it
 * gives one: then nothing is recorded, and the answer names them. Answers the
 * names of the files recorded, in the order uploaded. Throws a TypeError for a
 * malformed request, a `RequestRefusal` for another file under a name taken.
 */
export function recordUpload(
  uploads: UploadedFile[],
  workers: Iterable<string>,
  msg: Record<string, unknown>,
): string[] | UploadUnasked {
  // Over TCP the scheduler's comms leave large buffers unread: this one it compares.
  const data = msg.data instanceof ForwardedBytes ? Buffer.concat(msg.data.pieces) : msg.data;
  const file = { name: msg.name, data, load: msg.load } as UploadedFile;
  const problem = uploadedFileProblem(file);
  if (problem !== null) throw new TypeError(`upload-file: ${problem}`);
  const asked = msg.asked;
  if (asked !== undefined && !(Array.isArray(asked) && asked.every((a) => typeof a === "string"))) {
    throw new TypeError("upload-file: asked must be an array of worker addresses");
  }
  const before = uploads.find((f) => f.name === file.name);
  if (before !== undefined && !sameBytes(before.data, file.data)) {
    throw new RequestRefusal(`upload-file: ${uploadConflict(file.name)}`);
  }
  if (asked !== undefined) {
    const named = new Set(asked);
    const unasked = [...workers].filter((w) => !named.has(w));
    if (unasked.length > 0) return { unasked };
  }
  if (before === undefined) {
    uploads.push(file);
  } else if (file.load && !before.load) {
    // Saved only until now: from now on imported too, where it was.
    uploads[uploads.indexOf(before)] = { ...before, load: true };
  }
  return uploads.map((f) => f.name);
}
