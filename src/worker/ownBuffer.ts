/** Moving bytes between threads instead of copying them. */

/**
 * Below this many bytes a buffer is copied, not moved: a move detaches it here
 * and wraps it anew there, which saves nothing on a small one (3,000 `inc`
 * tasks one after another on one pool thread, 4 alternated rounds: about 6%
 * more time a task with every argument and result moved, on a noisy host).
 */
export const MOVE_MIN_BYTES = 64 * 1024;

/**
 * `[b.buffer]` when `b` is at least {@link MOVE_MIN_BYTES} and spans the whole of
 * its `ArrayBuffer` (as what `v8.serialize` returns does), so that it can be
 * moved to another thread rather than copied; else none.
 */
export function ownBuffer(b: Uint8Array): ArrayBuffer[] {
  const buffer = b.buffer;
  return b.byteLength >= MOVE_MIN_BYTES &&
    buffer instanceof ArrayBuffer &&
    b.byteOffset === 0 &&
    b.byteLength === buffer.byteLength
    ? [buffer]
    : [];
}
