/** Moving bytes between threads instead of copying them. */

/**
 * `[b.buffer]` when `b` spans the whole of its `ArrayBuffer` (as what
 * `v8.serialize` returns does), so that it can be moved to another thread
 * rather than copied; else none.
 */
export function ownBuffer(b: Uint8Array): ArrayBuffer[] {
  const buffer = b.buffer;
  return buffer instanceof ArrayBuffer && b.byteOffset === 0 && b.byteLength === buffer.byteLength
    ? [buffer]
    : [];
}
