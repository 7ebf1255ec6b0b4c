/**
 * The value of `--scheduler-file`, as every command that takes it parses it: an empty
 * path, an unset variable in a job script (`--scheduler-file "$SCHEDULER_FILE"`), is
 * refused at once naming the option. Taken as given, `weft scheduler` listened, then
 * failed saying "cannot write the scheduler file : cannot write in /home/me (EISDIR)",
 * and `weft worker` said it waited for the file, then failed in the words of an API
 * (`readSchedulerFile: the path must be a non-empty string`), naming no option. Dask
 * reads an empty one as none given.
 */

import { InvalidArgumentError } from "commander";

/** commander's parser of `--scheduler-file <path>`: `text`, unless empty. */
export function schedulerFilePath(text: string): string {
  if (text === "") {
    throw new InvalidArgumentError("the path is empty (an unset variable in a script?)");
  }
  return text;
}
