/**
 * The scheduler's record of the files clients upload (`Client.uploadFile`),
 * which every worker registering from then on saves and imports first: kept
 * once every worker there has it (see `askedWorkers.ts`).
 */

import { ForwardedBytes } from "../comm/forwardedBytes.ts";
import {
  sameBytes,
  type UploadedFile,
  uploadConflict,
  uploadedFileProblem,
} from "../protocol/uploads.ts";
import { type Unasked, unaskedOf } from "./askedWorkers.ts";
import { RequestRefusal } from "./requestRefusal.ts";

/**
 * Record the file of `msg` (an `upload-file` request) in `uploads`, unless one
 * of `workers` (those the scheduler has) is not in its `asked` list, when it
 * gives one, or its registration (`idOf`) not in its `askedIds`, when it gives
 * those: then nothing is recorded, and the answer names them. Answers the
 * names of the files recorded, in the order uploaded. Throws a TypeError for a
 * malformed request, a `RequestRefusal` for another file under a name taken.
 */
export function recordUpload(
  uploads: UploadedFile[],
  workers: Iterable<string>,
  msg: Record<string, unknown>,
  idOf: (address: string) => string | undefined = () => undefined,
): string[] | Unasked {
  // Over TCP the scheduler's comms leave large buffers unread: this one it compares.
  const data = msg.data instanceof ForwardedBytes ? Buffer.concat(msg.data.pieces) : msg.data;
  const file = { name: msg.name, data, load: msg.load } as UploadedFile;
  const problem = uploadedFileProblem(file);
  if (problem !== null) throw new TypeError(`upload-file: ${problem}`);
  const before = uploads.find((f) => f.name === file.name);
  if (before !== undefined && !sameBytes(before.data, file.data)) {
    throw new RequestRefusal(`upload-file: ${uploadConflict(file.name)}`);
  }
  const unasked = unaskedOf("upload-file", workers, msg.asked, { askedIds: msg.askedIds, idOf });
  if (unasked !== null) return unasked;
  if (before === undefined) {
    uploads.push(file);
  } else if (file.load && !before.load) {
    // Saved only until now: from now on imported too, where it was.
    uploads[uploads.indexOf(before)] = { ...before, load: true };
  }
  return uploads.map((f) => f.name);
}
