/**
 * The trace that `traces.ts` and `chaos.ts` write and `record.py` reads: a worker's
 * configuration and events in the conformance vectors' forms (../shared/conformance/
 * FORMAT.md), with what the data store refused and what was set between stimuli.
 */

/** A refusal of the data store to store `key` during one step (FORMAT.md `data_store_errors`). */
export interface StoreError {
  key: string;
  exception_text: string;
  traceback_text: string;
}
