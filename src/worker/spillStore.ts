/**
 * A data store that spills to disk (Dask's `SpillBuffer`, zict's LRU over a
 * file store): it keeps at most `targetBytes` of values in memory, as `sizeof`
 * measures them, and writes the least recently used others to files
 * (`v8.serialize`, the structured clone that carries values between threads),
 * reading each back, into memory, when it is next asked for.
 *
 * - A value larger than the target on its own goes straight to disk, and
 *   stays there when read (each read reads the file).
 * - A value that cannot be serialised stays in memory, not tried again; a
 *   value set straight to disk that cannot be makes `set` throw (the seed's
 *   `data[key] = value` failing: the task errs with that error).
 * - A write that fails (a full disk, the directory gone) keeps the value in
 *   memory, a value set straight to disk included, and ends that eviction;
 *   the next one tries again (Dask's `SpillBuffer` on an `OSError`). Only the
 *   first failure of a run of them is told: a full disk would tell one a store.
 * - A value whose file is gone, shorter or longer than written, changed (its
 *   CRC-32 checked where Node.js has `zlib.crc32`), or cannot be decoded (a
 *   temporary-files cleaner, a disk that filled up, a failing disk) is lost:
 *   `get` throws a {@link SpilledValueLostError} naming the key and
 *   the file, now and at each later `get`, until the key is deleted or set
 *   anew. The key stays listed (`has`) so that the worker's state machine,
 *   which holds it in memory, finds it where it left it until it drops it.
 * - The files live in a directory of their own, made on the first spill in
 *   `directory` and named after the process (`weft-spill-<pid>-<host>-…`), made
 *   anew if removed meanwhile, and removed by {@link close}. A process killed
 *   before it could remove its directories leaves them behind: the first spill
 *   of a later process removes those of processes no longer running.
 */

import { readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serialize } from "node:v8";
import * as zlib from "node:zlib";
import { deserializeOwned } from "../comm/ownedDeserialize.ts";
import { scratchDirectoryIn } from "../util/scratchDirectory.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import type { DataStore } from "./state/dataStore.ts";

/** Options of a {@link SpillStore}. */
export interface SpillStoreOptions {
  /** Bytes of values kept in memory, as `sizeof` measures them. */
  readonly targetBytes: number;
  /** Where to make the directory of spilled values. */
  readonly directory: string;
  /** A value's size in bytes (the worker's `sizeof`). */
  readonly sizeof: (value: unknown) => number;
  /**
   * Told of a value that could not be spilled (it stays in memory): each that
   * cannot be serialised, and the first write failure since a spill last
   * succeeded.
   */
  readonly onSpillFailed?: (key: string, err: unknown) => void;
}

/** How much a {@link SpillStore} holds where, and what it did. */
export interface SpillStats {
  /** Values in memory, and their bytes. */
  readonly memoryKeys: number;
  /** Their bytes. */
  readonly memoryBytes: number;
  /** Values on disk, and their bytes (as measured in memory). */
  readonly spilledKeys: number;
  /** Their bytes, as measured in memory before they were spilled. */
  readonly spilledBytes: number;
  /** Values written to disk so far, and read back. */
  readonly spillCount: number;
  /** Values read back from disk so far. */
  readonly unspillCount: number;
  /** Spills that failed (their values kept in memory): unserialisable values and failed writes. */
  readonly spillFailures: number;
  /** Values lost from disk (their files gone or damaged) that the store still lists. */
  readonly lostKeys: number;
}

interface InMemory {
  readonly value: unknown;
  readonly bytes: number;
}

interface OnDisk {
  readonly file: string;
  readonly bytes: number;
  /** The file's size as written: a file cut short or added to is damaged. */
  readonly fileBytes: number;
  /** The CRC-32 of what was written (null where Node.js has none: before 20.15). */
  readonly crc: number | null;
}

/**
 * `zlib.crc32`, where Node.js has it (20.15 on; a namespace import, as a named
 * one would fail to load before). A changed byte that still decodes would
 * otherwise hand tasks a wrong value without a word; it costs a fraction of
 * what serialising the value does.
 */
const crc32: ((data: Uint8Array) => number) | null =
  typeof zlib.crc32 === "function" ? (data) => zlib.crc32(data) : null;

/** A {@link DataStore} keeping at most `targetBytes` in memory, the rest on disk. */
export class SpillStore implements DataStore {
  /** In least recently used order (a read moves a value to the end). */
  private readonly fast = new Map<string, InMemory>();
  private readonly slow = new Map<string, OnDisk>();
  /** Values that could not be serialised: not tried again until set anew. */
  private readonly unspillable = new Set<string>();
  /** Values whose file was found gone or damaged, with the error each `get` throws. */
  private readonly lost = new Map<string, SpilledValueLostError>();
  private dir: string | null = null;
  private files = 0;
  private memoryBytes = 0;
  private spilledBytes = 0;
  private spillCount = 0;
  private unspillCount = 0;
  private spillFailures = 0;
  /** A write failed and none has succeeded since: later failures are not told. */
  private writesFailing = false;
  private closed = false;

  constructor(private readonly options: SpillStoreOptions) {
    if (!(options.targetBytes >= 0)) {
      throw new RangeError(`SpillStore: targetBytes must be ≥ 0, got ${options.targetBytes}`);
    }
  }

  get size(): number {
    return this.fast.size + this.slow.size + this.lost.size;
  }

  has(key: string): boolean {
    return this.fast.has(key) || this.slow.has(key) || this.lost.has(key);
  }

  /** Whether `key`'s value was lost from disk (and the key not deleted or set since). */
  isLost(key: string): boolean {
    return this.lost.has(key);
  }

  get(key: string): unknown {
    const held = this.fast.get(key);
    if (held !== undefined) {
      this.fast.delete(key);
      this.fast.set(key, held);
      return held.value;
    }
    const spilled = this.slow.get(key);
    if (spilled === undefined) {
      const lost = this.lost.get(key);
      if (lost !== undefined) throw lost;
      return undefined;
    }
    if (this.closed) throw new Error(`SpillStore: closed; ${key} was on disk`);
    const value = this.readBack(key, spilled);
    this.unspillCount++;
    // A value larger than the target stays on disk, as zict's Buffer leaves it
    // ("avoid useless movement for heavy values"): back in memory, it would be
    // kept there alone above the target, which the memory monitor reads as the
    // worker's memory filling up.
    if (spilled.bytes > this.options.targetBytes) return value;
    this.forgetFile(key, spilled);
    this.fast.set(key, { value, bytes: spilled.bytes });
    this.memoryBytes += spilled.bytes;
    this.evict(key);
    return value;
  }

  set(key: string, value: unknown): this {
    this.delete(key);
    const bytes = this.options.sizeof(value);
    if (bytes > this.options.targetBytes) {
      // Throws if it cannot be serialised: nothing is stored, and the task errs.
      const payload = this.serialized(value);
      if (this.writeFailed(key, () => this.write(key, payload, bytes))) {
        // As Dask's buffer does on an OSError: kept in memory, and spilled again
        // (least recently used) once the disk takes it.
        this.fast.set(key, { value, bytes });
        this.memoryBytes += bytes;
      }
      return this;
    }
    this.fast.set(key, { value, bytes });
    this.memoryBytes += bytes;
    this.evict(key);
    return this;
  }

  delete(key: string): boolean {
    this.unspillable.delete(key);
    if (this.lost.delete(key)) return true;
    const held = this.fast.get(key);
    if (held !== undefined) {
      this.fast.delete(key);
      this.memoryBytes -= held.bytes;
      return true;
    }
    const spilled = this.slow.get(key);
    if (spilled === undefined) return false;
    this.forgetFile(key, spilled);
    return true;
  }

  *keys(): IterableIterator<string> {
    // Copies: a caller may delete keys as it goes.
    yield* [...this.fast.keys(), ...this.slow.keys(), ...this.lost.keys()];
  }

  /** Where values are now, and the spills so far. */
  get stats(): SpillStats {
    return {
      memoryKeys: this.fast.size,
      memoryBytes: this.memoryBytes,
      spilledKeys: this.slow.size,
      spilledBytes: this.spilledBytes,
      spillCount: this.spillCount,
      unspillCount: this.unspillCount,
      spillFailures: this.spillFailures,
      lostKeys: this.lost.size,
    };
  }

  /**
   * Remove the spill directory (its worker has closed). The bookkeeping stays, as
   * the worker's state machine still lists the keys; a spilled value can no longer
   * be read, nor a value spilled. Idempotent.
   */
  close(): void {
    this.closed = true;
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }

  /**
   * Spill the least recently used value that can be (Dask's `SpillBuffer.evict`,
   * which its memory monitor calls when the process uses too much): the bytes
   * it held in memory, -1 when no value in memory can be spilled, or -2 when
   * the write failed (a full disk: told as {@link SpillStoreOptions.onSpillFailed}
   * says, and worth trying again later).
   */
  evictOne(): number {
    if (this.closed) return -1;
    for (const [key, held] of this.fast) {
      if (this.unspillable.has(key)) continue;
      const outcome = this.spill(key, held);
      if (outcome === "spilled") return held.bytes;
      if (outcome === "write failed") return -2;
    }
    return -1;
  }

  /** Spill the least recently used values, but `keep`, until memory is within the target. */
  private evict(keep: string): void {
    if (this.memoryBytes <= this.options.targetBytes) return;
    for (const [key, held] of this.fast) {
      if (this.memoryBytes <= this.options.targetBytes) return;
      if (key === keep || this.unspillable.has(key)) continue;
      // The disk failing now would fail for the next value too: tried at the next eviction.
      if (this.spill(key, held) === "write failed") return;
    }
  }

  /**
   * Move `key` from memory to disk. A value that cannot be serialised is never
   * tried again (until set anew); a failed write is, at a later eviction.
   */
  private spill(key: string, held: InMemory): "spilled" | "unserialisable" | "write failed" {
    let payload: Buffer;
    try {
      payload = this.serialized(held.value);
    } catch (err) {
      this.unspillable.add(key);
      this.spillFailures++;
      this.options.onSpillFailed?.(key, err);
      return "unserialisable";
    }
    if (this.writeFailed(key, () => this.write(key, payload, held.bytes))) return "write failed";
    this.fast.delete(key);
    this.memoryBytes -= held.bytes;
    return "spilled";
  }

  private serialized(value: unknown): Buffer {
    if (this.closed) throw new Error("SpillStore: closed");
    return serialize(value);
  }

  /** Run `write`: true if it threw, which is counted and, first of a run, told. */
  private writeFailed(key: string, write: () => void): boolean {
    try {
      write();
    } catch (err) {
      this.spillFailures++;
      if (!this.writesFailing) this.options.onSpillFailed?.(key, err);
      this.writesFailing = true;
      return true;
    }
    this.writesFailing = false;
    return false;
  }

  private write(key: string, payload: Buffer, bytes: number, dirMadeAnew = false): void {
    this.dir ??= scratchDirectoryIn(this.options.directory, "weft-spill");
    const file = join(this.dir, String(++this.files));
    try {
      writeFileSync(file, payload);
    } catch (err) {
      if (!dirMadeAnew && (err as { code?: unknown }).code === "ENOENT") {
        // The directory was removed under the worker (a temporary-files cleaner, a
        // user's rm -rf /tmp/*): without another, every later spill would fail.
        this.dir = null;
        this.write(key, payload, bytes, true);
        return;
      }
      try {
        rmSync(file, { force: true }); // a partial file: a disk that filled up midway
      } catch {
        // The write's failure is the one to tell.
      }
      throw err;
    }
    this.slow.set(key, { file, bytes, fileBytes: payload.length, crc: crc32?.(payload) ?? null });
    this.spilledBytes += bytes;
    this.spillCount++;
  }

  /**
   * `key`'s value, read from its file; a file that is gone, of another size
   * or checksum than written (a disk that filled up cut it short, a failing
   * one changed it) or that does not decode makes the value lost. A damaged
   * file is removed with the rest: its value will not be read from it again.
   */
  private readBack(key: string, spilled: OnDisk): unknown {
    try {
      const payload = readFileSync(spilled.file);
      if (payload.length !== spilled.fileBytes) {
        throw new Error(`${payload.length} bytes where ${spilled.fileBytes} were written`);
      }
      if (spilled.crc !== null && crc32?.(payload) !== spilled.crc) {
        throw new Error("its bytes are not those written (CRC-32 mismatch)");
      }
      // Small arrays in it copied out: they would keep the whole file's bytes allocated.
      return deserializeOwned(payload);
    } catch (cause) {
      const err = new SpilledValueLostError(key, spilled.file, cause);
      this.forgetFile(key, spilled);
      this.lost.set(key, err);
      throw err;
    }
  }

  private forgetFile(key: string, spilled: OnDisk): void {
    this.slow.delete(key);
    this.spilledBytes -= spilled.bytes;
    try {
      unlinkSync(spilled.file);
    } catch {
      // Gone already (the directory removed): nothing to free.
    }
  }
}
