/**
 * The task modules `weft run --tasks` names, as the file URLs the workers load,
 * said in the option's words: the cluster's own (`LocalCluster option
 * taskModules: no such file: …`) named an API option the user never wrote.
 */

import { existingModuleUrl, fileModuleUrl } from "../../util/moduleUrl.ts";

/**
 * The file URL of `--tasks given`; with `local` (an embedded cluster, whose
 * workers load it from this machine) only if the file exists. Throws an Error
 * starting `--tasks GIVEN: ` otherwise. A running scheduler's workers may see
 * other files: they say themselves what they cannot load.
 */
export function taskModuleOption(given: string, local: boolean): string {
  const what = `--tasks ${given}`;
  const url = fileModuleUrl(given, what);
  return local ? existingModuleUrl(url, what) : url;
}

/**
 * Throws an Error naming `file`'s `tasks` when one of them (`urls`, as the graph
 * file resolved them) does not exist on this machine, for an embedded cluster.
 */
export function checkGraphTaskModules(file: string, urls: readonly string[]): void {
  for (const url of urls) existingModuleUrl(url, `${file}: tasks`);
}
