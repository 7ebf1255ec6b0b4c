/**
 * Task modules changed on disk since a worker imported them. Node.js cannot
 * import a module again (a module imported stays imported), so a
 * `loadTaskModules` of a module edited since it loaded answered OK and tasks
 * went on running the old code, silently, where Dask's `upload_file` reloads
 * it; and a worker joining later imports the new code, the cluster then
 * running two versions under the same names. A worker refuses such a load
 * instead, saying so: of the modules loaded through clients and of its own
 * task modules (`taskModules`), imported as it started.
 */

import { fileDigest } from "../util/fileDigest.ts";
import { importedDigest } from "../util/importModule.ts";

/** The digest of each module's bytes as one worker first loaded it. */
export class LoadedModuleDigests {
  /**
   * By URL. One worker's, not the process's: a worker started later in the
   * process (a restart) imports the new bytes on its new pool threads, and
   * would be refused a load of what it runs. But with the inline executor
   * the modules are imported on this thread, whose module cache outlives the
   * worker: a worker started later in the process (`client.restart()` of a
   * `LocalCluster`) gets the module the process first imported, whatever its
   * file holds now, so the digest noted is then that of the bytes Node.js
   * evaluated (`importedDigest`), not those on disk.
   */
  private readonly digests = new Map<string, string | null>();

  /** `inProcess`: the modules are imported on this thread (the inline executor), not on pool threads of the worker's own. */
  constructor(private readonly inProcess: () => boolean) {}

  /** Note the bytes of `urls`, just imported: those of a module noted already are kept. */
  note(urls: readonly string[]): void {
    for (const url of urls) {
      if (this.digests.has(url)) continue;
      const evaluated = this.inProcess() ? importedDigest(url) : undefined;
      this.digests.set(url, evaluated === undefined ? fileDigest(url) : evaluated);
    }
  }

  /** Why loading `urls` again would not run what their files hold now (one changed since noted), or null. */
  changed(urls: readonly string[]): string | null {
    for (const url of urls) {
      const before = this.digests.get(url);
      if (before === undefined || before === null) continue;
      const now = fileDigest(url);
      if (now !== null && now !== before) {
        return this.inProcess()
          ? `${url} changed since this process imported it: a module imported stays imported ` +
              "(Node.js cannot import it again, and the inline executor's workers import in the process's " +
              "module cache, which a restart of the workers keeps), so its new code would not run; give the " +
              "new version another file name, or restart the process"
          : `${url} changed since this worker imported it: a module imported stays imported ` +
              "(Node.js cannot import it again), so its new code would not run; give the new version another " +
              "file name, or restart the workers";
      }
    }
    return null;
  }
}
