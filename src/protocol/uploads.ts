/**
 * Files a client uploads into the cluster (`Client.uploadFile`, Dask's
 * `upload_file`): each worker saves them in a directory of its own and
 * imports the task modules among them. The client, the scheduler (which keeps
 * them for the workers to come) and the workers check them alike.
 */

import { cutEnd } from "../util/cutText.ts";

/** A file uploaded into the cluster: its name (no directory), its bytes, whether workers import it. */
export interface UploadedFile {
  /** The file's name, without a directory. */
  readonly name: string;
  /** The file's bytes. */
  readonly data: Uint8Array;
  /** Import it as a task module once saved; only for a module ({@link isModuleFileName}). */
  readonly load: boolean;
}

/** The name each worker's upload directory keeps for itself (it makes `.js` and `.ts` files ES modules). */
export const UPLOAD_PACKAGE_JSON = "package.json";

/** Longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/** True for the name of a file Node.js (with tsx) imports as a module: `.js`, `.mjs`, `.cjs`, `.ts`, `.mts`, `.cts`, `.tsx`. */
export function isModuleFileName(name: string): boolean {
  return /\.(?:[mc]?[jt]s|tsx)$/.test(name);
}

/** Why `name` cannot be the name of an uploaded file, or null. */
export function uploadNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || name === "") return "a file name must be a non-empty string";
  if (name === "." || name === ".." || /[/\\\0]/.test(name)) {
    return `${JSON.stringify(name)} is not a file name (no directory part, no NUL)`;
  }
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    return `the file name ${JSON.stringify(name.slice(0, cutEnd(name, 40)))}… is longer than ${MAX_NAME_BYTES} bytes`;
  }
  if (name === UPLOAD_PACKAGE_JSON) {
    return `${UPLOAD_PACKAGE_JSON} cannot be uploaded: the upload directory's own makes its .js and .ts files ES modules`;
  }
  return null;
}

/** Why `v` is not an {@link UploadedFile} (a module if it is to be imported), or null. */
export function uploadedFileProblem(v: unknown): string | null {
  if (typeof v !== "object" || v === null) return "expected {name, data, load}";
  const { name, data, load } = v as Record<string, unknown>;
  const problem = uploadNameProblem(name);
  if (problem !== null) return problem;
  if (!(data instanceof Uint8Array)) return `the data of ${String(name)} must be bytes`;
  if (typeof load !== "boolean") return `load must be true or false for ${String(name)}`;
  if (load && !isModuleFileName(name as string)) {
    return `${String(name)} cannot be imported: only .js, .mjs, .cjs, .ts, .mts, .cts and .tsx files are modules`;
  }
  return null;
}

/** Why a list of uploaded files (as the scheduler's register reply carries them) is not one, or null. */
export function uploadedFilesProblem(v: unknown): string | null {
  if (!Array.isArray(v)) return "expected an array of uploaded files";
  for (const f of v) {
    const problem = uploadedFileProblem(f);
    if (problem !== null) return problem;
  }
  return null;
}

/** True if `a` and `b` hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

/** The refusal of a second, different file under a name already uploaded. */
export function uploadConflict(name: string): string {
  return `a different file named ${name} was uploaded already: modules imported stay imported, so give the new one another name`;
}
