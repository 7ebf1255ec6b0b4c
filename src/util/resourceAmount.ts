/**
 * An amount of an abstract resource (`{GPU: 2}`): a finite number, not negative. The
 * scheduler, the worker and its state machine all check amounts against this one rule,
 * so that what one side takes the other does not refuse.
 */
export function isResourceAmount(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0;
}

/**
 * Resources as `weft worker --resources` takes them (`GPU=1,MEM=8000000000`), so that
 * what a log or `weft status` shows can be given back to a worker as it stands;
 * `""` for none.
 */
export function resourcesText(resources: Readonly<Record<string, number>>): string {
  return Object.entries(resources)
    .map(([name, amount]) => `${name}=${amount}`)
    .join(",");
}
