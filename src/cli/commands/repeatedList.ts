/**
 * The argument parser of a comma-separated list option that may be given more than
 * once (`--keys a,b --keys c`): the lists join, as if given as one (`a,b,c`), and the
 * list's own checks (a resource or a fault named twice) see them all. Commander keeps
 * the last value of an option given twice, so `--resources GPU=1 --resources MEM=8e9`
 * started a worker without its GPU, and `--keys x --keys y` computed y alone, saying
 * nothing.
 */
export function joinRepeatedList(value: string, previous: string | undefined): string {
  return previous === undefined ? value : `${previous},${value}`;
}
