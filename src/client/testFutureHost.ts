/**
 * A client stand-in for tests of what handles futures without a cluster
 * (building graphs and arguments, searching values): futures made with it
 * share one record per key, as a client's do, and nothing is ever computed.
 */

import type { FutureHost } from "./future.ts";
import { KeyRecord } from "./keyRecord.ts";

/** A {@link FutureHost} keeping one record per key in `records`, and asked for nothing else. */
export function standInFutureHost(): FutureHost & { readonly records: Map<string, KeyRecord> } {
  const records = new Map<string, KeyRecord>();
  return {
    id: "stand-in",
    records,
    resultOf: () => Promise.reject(new Error("a stand-in computes nothing")),
    cancelKeys: () => Promise.resolve(),
    retry: () => Promise.resolve([]),
    dropRef: (key) => {
      const rec = records.get(key);
      if (rec !== undefined) rec.refs--;
    },
    addRef: (key) => {
      let rec = records.get(key);
      if (rec === undefined) records.set(key, (rec = new KeyRecord(key)));
      rec.refs++;
      return rec;
    },
  };
}
