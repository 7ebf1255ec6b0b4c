/**
 * The simulator's seeded random source: sfc32 (a small, fast, well-mixed
 * 32-bit generator) seeded through splitmix32. Every random choice of a
 * simulated run comes from one of these, so a seed replays the run exactly.
 */

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A deterministic pseudo-random generator; the same seed gives the same sequence. */
export class SimRng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /**
   * A generator for `seed` (any finite number). Its two 32-bit words are folded into
   * one (`lo ^ hi`), so seeds at or above 2**32 collide with smaller ones: a run's
   * seed goes through {@link SimRng.forSeed} instead.
   */
  constructor(seed: number) {
    const st = { s: (seed | 0) ^ Math.floor(seed / 0x1_0000_0000) };
    this.a = splitmix32(st);
    this.b = splitmix32(st);
    this.c = splitmix32(st);
    this.d = splitmix32(st);
    for (let i = 0; i < 12; i++) this.next32();
  }

  /**
   * The generator of a run's seed (a safe integer ≥ 0): below 2**32 the same as
   * `new SimRng(seed)`, so every seed below keeps its run; above, the high word is
   * mixed in on its own, so that seed 2**32 does not replay seed 1 (nor 2**32 + 1 seed 0).
   */
  static forSeed(seed: number): SimRng {
    const rng = new SimRng(seed % 0x1_0000_0000);
    const hi = Math.floor(seed / 0x1_0000_0000);
    if (hi !== 0) {
      const st = { s: hi | 0 };
      rng.a ^= splitmix32(st);
      rng.b ^= splitmix32(st);
      rng.c ^= splitmix32(st);
      rng.d ^= splitmix32(st);
      for (let i = 0; i < 12; i++) rng.next32();
    }
    return rng;
  }

  /** The next 32 random bits, as an unsigned integer. */
  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  random(): number {
    return this.next32() / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  /** An integer in [lo, hi] (both included). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.random() < p;
  }

  /** A float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + this.random() * (hi - lo);
  }

  /** An exponentially distributed float with mean `mean`. */
  exp(mean: number): number {
    return -Math.log(1 - this.random()) * mean;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** `k` distinct elements of `items` (all of them if there are fewer), in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const pool = items.slice();
    const n = Math.min(k, pool.length);
    for (let i = 0; i < n; i++) {
      const j = i + this.int(pool.length - i);
      const t = pool[i];
      pool[i] = pool[j];
      pool[j] = t;
    }
    return pool.slice(0, n);
  }

  /** An independent generator derived from this one's next output and `salt`. */
  fork(salt: number): SimRng {
    return new SimRng(this.next32() * 65536 + (salt & 0xffff));
  }
}
