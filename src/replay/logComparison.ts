import type { ComparableRecord } from "./records.ts";

/** How the replayed records of one stimulus compare with the dumped ones. */
export type RecordsVerdict =
  /** The same records in the same order. */
  | "equal"
  /** The same records in another order: a choice Python's set order made differently. */
  | "reordered"
  /** Different records: the replay took another path. */
  | "divergent";

/** The first place where two record sequences differ. */
export interface RecordDifference {
  /** Position in the stimulus's records. */
  readonly index: number;
  /** The dumped record there (null: the dump has no more). */
  readonly expected: ComparableRecord | null;
  /** The replayed record there (null: the replay has no more). */
  readonly replayed: ComparableRecord | null;
  /** Dumped records the replay does not have (as multisets). */
  readonly missing: number;
  /** Replayed records the dump does not have (as multisets). */
  readonly extra: number;
}

/** Compares the records of one stimulus, in order and then as multisets. */
export function compareRecords(
  expected: readonly ComparableRecord[],
  replayed: readonly ComparableRecord[],
): { verdict: RecordsVerdict; difference: RecordDifference | null } {
  const n = Math.max(expected.length, replayed.length);
  let index = -1;
  for (let i = 0; i < n; i++) {
    if (expected[i]?.canonical !== replayed[i]?.canonical) {
      index = i;
      break;
    }
  }
  if (index < 0) return { verdict: "equal", difference: null };
  const counts = new Map<string, number>();
  for (const r of expected) counts.set(r.canonical, (counts.get(r.canonical) ?? 0) + 1);
  let extra = 0;
  for (const r of replayed) {
    const c = counts.get(r.canonical) ?? 0;
    if (c > 0) counts.set(r.canonical, c - 1);
    else extra++;
  }
  let missing = 0;
  for (const c of counts.values()) missing += c;
  return {
    verdict: missing === 0 && extra === 0 ? "reordered" : "divergent",
    difference: {
      index,
      expected: expected[index] ?? null,
      replayed: replayed[index] ?? null,
      missing,
      extra,
    },
  };
}
