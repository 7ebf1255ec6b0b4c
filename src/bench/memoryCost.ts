/**
 * What fresh memory costs on the machine a benchmark runs on, and how much of
 * it a run touched.
 *
 * V8 returns freed heap pages to the kernel after a collection (old-space
 * pages emptied by a mark-compact, large objects such as the hash tables of
 * Maps with more than ~4,000 entries), so a run that promotes many objects
 * or grows large Maps touches fresh pages, each a minor page fault. On bare
 * metal a fault costs well under a microsecond; on some virtual machines
 * (shadow paging) it costs 15–20 µs, enough to dominate a run. Benchmarks
 * print the fault counts and this probe's figure so that runs on different
 * machines can be compared.
 */

/** Minor page faults of this process so far. */
export function minorFaults(): number {
  return process.resourceUsage().minorPageFault;
}

/** System CPU seconds of this process so far. */
export function systemCpuSeconds(): number {
  return process.resourceUsage().systemCPUTime / 1e6;
}

/**
 * Microseconds per first touch of a fresh 4 KiB page: touches a newly
 * allocated buffer outside the V8 heap one byte per page. A large allocation
 * is a fresh mapping early in a process (the benchmarks call this at their
 * start); later the allocator may hand back memory the process freed, already
 * backed. Returns null if the kernel reported no faults (the buffer was
 * already backed).
 */
export function freshPageMicros(bytes = 16 * 1024 * 1024): number | null {
  const page = 4096;
  const buf = Buffer.allocUnsafeSlow(bytes);
  const f0 = minorFaults();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < bytes; i += page) buf[i] = 1;
  const micros = Number(process.hrtime.bigint() - t0) / 1e3;
  const faults = minorFaults() - f0;
  return faults > 0 ? Number((micros / faults).toFixed(2)) : null;
}
