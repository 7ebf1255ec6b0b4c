/**
 * The injected `sizeof` and `typeName` as the core calls them: neither throws.
 * They run as a task enters memory, once its state says so: a throw there left
 * the task in memory without a size, and the stimulus half handled.
 */

import { typeName as defaultTypeName } from "../../util/sizeof.ts";

/** Dask's `safe_sizeof` default: the size of a value whose `sizeof` raised. */
export const SAFE_SIZEOF_DEFAULT = 1e6;

/** `sizeof`, or {@link SAFE_SIZEOF_DEFAULT} where it throws (Dask's `safe_sizeof`, which also logs: a pure core cannot). */
export function safeSizeof(sizeof: (value: unknown) => number): (value: unknown) => number {
  return (value) => {
    try {
      return sizeof(value);
    } catch {
      return SAFE_SIZEOF_DEFAULT;
    }
  };
}

/** `typeName`, or the default `typeName` (util/sizeof.ts, which never throws) where it throws. */
export function safeTypeName(typeName: (value: unknown) => string): (value: unknown) => string {
  return (value) => {
    try {
      return typeName(value);
    } catch {
      return defaultTypeName(value);
    }
  };
}
