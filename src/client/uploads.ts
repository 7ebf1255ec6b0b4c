/**
 * `Client.uploadFile` (Dask's `upload_file`): the client reads a file and
 * sends its bytes to every worker, which saves it with the cluster's other
 * uploads and imports it if it is a task module; once all could, the
 * scheduler keeps it, so that every worker registering from then on does the
 * same first (asked to keep it, the scheduler names the workers that
 * registered meanwhile, which are asked in turn: see `scheduler/askedWorkers.ts`). Workers accept uploads only when started to (`acceptUploads`,
 * `weft worker --allow-uploads`).
 */

import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { isModuleFileName, type UploadedFile, uploadedFileProblem } from "../protocol/uploads.ts";
import { showValue } from "../util/showValue.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { checkOptionalBoolean, knownOptionsOf } from "./argChecks.ts";
import { UploadError } from "./errors.ts";
import { UPLOAD_OPTIONS } from "./optionNames.ts";
import { askForTasks } from "./taskModules.ts";

/** The largest file that can be uploaded: the scheduler holds every upload for the workers to come. */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** Options of `Client.uploadFile`. */
export interface UploadFileOptions {
  /**
   * Import the file as a task module once saved. Default: true for a module
   * (`.js`, `.mjs`, `.cjs`, `.ts`, `.mts`, `.cts`, `.tsx`), false for any other
   * file, which is only saved (beside the uploaded modules, which may read it
   * at `new URL("./name", import.meta.url)`).
   */
  readonly load?: boolean;
}

/** The file at `path` (a path or a `file:` URL) as an upload, or a TypeError saying why it cannot be one. */
export async function readUpload(
  path: string | URL,
  options: UploadFileOptions = {},
): Promise<UploadedFile> {
  knownOptionsOf("uploadFile", options, UPLOAD_OPTIONS);
  checkOptionalBoolean("uploadFile", "load", options.load);
  const p = uploadPath(path);
  const info = await stat(p).catch((err: NodeJS.ErrnoException) => {
    throw new TypeError(`uploadFile: cannot read ${p}: ${err.code ?? err.message}`, { cause: err });
  });
  if (!info.isFile()) throw new TypeError(`uploadFile: ${p} is not a file`);
  if (info.size > MAX_UPLOAD_BYTES) {
    throw new TypeError(
      `uploadFile: ${p} is ${info.size} bytes; at most ${MAX_UPLOAD_BYTES} (64 MiB) can be uploaded`,
    );
  }
  const name = basename(p);
  const load = options.load ?? isModuleFileName(name);
  const file: UploadedFile = { name, data: await readFile(p), load };
  const problem = uploadedFileProblem(file);
  if (problem !== null) throw new TypeError(`uploadFile: ${problem}`);
  return file;
}

function uploadPath(path: string | URL): string {
  if (path instanceof URL || (typeof path === "string" && path.startsWith("file:"))) {
    const url = new URL(path);
    if (url.protocol !== "file:") throw new TypeError(`uploadFile: not a file URL: ${url.href}`);
    return fileURLToPath(url);
  }
  if (typeof path !== "string" || path === "") {
    throw new TypeError(`uploadFile: expected a path or file URL, got ${showValue(path)}`);
  }
  return path;
}

/** Have each worker of `addresses` save (and import) `file`: `{address: task functions then defined}`, by address. */
export function uploadToWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  file: UploadedFile,
  left?: (address: string) => Promise<boolean>,
): Promise<Record<string, readonly string[]>> {
  return askForTasks(
    peers,
    addresses,
    "upload_file",
    { name: file.name, data: file.data, load: file.load },
    (address, why, cause) => new UploadError(address, file.name, why, { cause }),
    left,
  );
}
