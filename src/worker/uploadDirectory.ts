/**
 * Where a process keeps the files clients uploaded into the cluster
 * (`Client.uploadFile`) for its workers: one directory, made on the first
 * upload under the system's temporary directory (`weft-uploads-<pid>-<host>-…`) and
 * removed as the process exits. One for the process, not one for each of its
 * workers: the workers of a `LocalCluster` share the process's module cache
 * and task registry, where a module imported from two paths would define its
 * tasks twice, and one imported from a path since removed could not be
 * imported again by a worker started later (a restart). All uploads are side
 * by side, so that an uploaded module imports another, or reads a data file
 * uploaded with it, by a relative URL. The directory's `package.json` makes
 * its `.js` and `.ts` files ES modules, as task modules are; the bare imports
 * of its modules (`weft`, a package) resolve as from the worker's directory
 * (see `util/uploadImports.ts`).
 */

import { rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  sameBytes,
  UPLOAD_PACKAGE_JSON,
  type UploadedFile,
  uploadConflict,
  uploadedFileProblem,
} from "../protocol/uploads.ts";
import { scratchDirectoryIn } from "../util/scratchDirectory.ts";

/** The prefix of upload directories' names (which `util/uploadImports.ts` recognises). */
export const UPLOAD_DIRECTORY_PREFIX = "weft-uploads";

/** A process's uploaded files, on disk. */
export class UploadDirectory {
  private dir: string | null = null;
  /**
   * What was saved under each name, so that a second upload of a name is
   * checked against it, and its write: the same file saved again (by the
   * process's next worker) is ready only once the first write is done.
   */
  private readonly saved = new Map<string, { data: Uint8Array; written: Promise<void> }>();
  private closed = false;

  /** @param base Where the directory is made. Default: the system's temporary directory. */
  constructor(private readonly base: string = tmpdir()) {}

  /** The directory, if a file was saved. */
  get path(): string | null {
    return this.dir;
  }

  /**
   * Save `file` and resolve with its file URL. The same bytes under a name
   * already saved are not written again; other bytes are refused (a module
   * imported stays imported: the new one would silently not be), unless the
   * first failed to import ({@link forgetFailed}: `importModule` imports the
   * fixed one under another URL, its bytes differing from those that failed).
   */
  async save(file: UploadedFile): Promise<string> {
    const problem = uploadedFileProblem(file);
    if (problem !== null) throw new TypeError(problem);
    if (this.closed) throw new Error("the upload directory is removed: the process is exiting");
    const before = this.saved.get(file.name);
    if (before !== undefined && !sameBytes(before.data, file.data)) {
      throw new Error(uploadConflict(file.name));
    }
    const path = join(this.directory(), file.name);
    if (before !== undefined) {
      await before.written;
    } else {
      // Claimed before the write, so that a second upload of the name meanwhile waits for it.
      const written = writeFile(path, file.data);
      this.saved.set(file.name, { data: file.data, written });
      try {
        await written;
      } catch (err) {
        this.saved.delete(file.name);
        throw err;
      }
    }
    return pathToFileURL(path).href;
  }

  /**
   * Forget `file`, saved but failing to import (it threw as it was evaluated,
   * did not parse): a different file may then be saved under its name, the
   * fixed module, which nothing imported yet. The same bytes saved since by
   * another are kept.
   */
  forgetFailed(file: UploadedFile): void {
    const saved = this.saved.get(file.name);
    if (saved !== undefined && sameBytes(saved.data, file.data)) this.saved.delete(file.name);
  }

  /** Remove the directory and what it holds; no file is saved afterwards. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.dir === null) return;
    rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }

  private directory(): string {
    if (this.dir === null) {
      // Synchronous: two saves at once must not both make a directory.
      const dir = scratchDirectoryIn(this.base, UPLOAD_DIRECTORY_PREFIX);
      writeFileSync(join(dir, UPLOAD_PACKAGE_JSON), '{"type": "module", "private": true}\n');
      this.dir = dir;
      process.once("exit", () => this.close());
    }
    return this.dir;
  }
}

let shared: UploadDirectory | null = null;

/** This process's {@link UploadDirectory}, which its workers share. */
export function processUploadDirectory(): UploadDirectory {
  shared ??= new UploadDirectory();
  return shared;
}
