/** The status of a dumped server (worker or scheduler), as its name. */

import type { Ctx, PathNode } from "./errors.ts";
import type { DumpValue } from "./values.ts";

const STATUS_REPR = /^<Status\.([A-Za-z_]+): '[^']*'>$/;

export function statusName(v: DumpValue | undefined, path: PathNode, ctx: Ctx): string | null {
  const s = ctx.optionalString(v, path);
  if (s === null) return null;
  return STATUS_REPR.exec(s)?.[1] ?? s;
}
