/**
 * CPython's `random.Random`, bit for bit, for integer seeds.
 *
 * The reference makes a few random choices (for example which worker to fetch
 * a key from). A port that must replay the reference's decisions needs the
 * same random stream, so this is the 32-bit Mersenne Twister (MT19937) seeded
 * exactly like CPython's `random_seed` (`init_by_array` over the 32-bit words
 * of `abs(seed)`), plus the derived methods whose CPython algorithms are short
 * enough to port exactly (`random`, `getrandbits`, `randbelow`, `choice`,
 * `shuffle`, `randint`).
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

/** Split a non-negative integer into little-endian 32-bit words; 0 gives `[0]` (CPython's `keyused = 1`). */
function seedWords(seed: bigint): number[] {
  const words: number[] = [];
  let n = seed;
  while (n > 0n) {
    words.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  if (words.length === 0) words.push(0);
  return words;
}

/**
 * A Mersenne Twister random number generator reproducing CPython's
 * `random.Random(seed)` stream for integer seeds.
 */
export class PyRandom {
  /** The generator state: 624 32-bit words. */
  private readonly mt = new Uint32Array(N);
  /** Index of the next state word to temper; `N` means "regenerate first". */
  private mti = N + 1;

  /**
   * Create a generator seeded like `random.Random(seed)`. The seed must be an
   * integer (`number` or `bigint`); like CPython, its absolute value is used.
   */
  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** Re-seed like `Random.seed(seed)` for an integer seed. */
  seed(seed: number | bigint): void {
    let big: bigint;
    if (typeof seed === "bigint") {
      big = seed;
    } else {
      if (!Number.isInteger(seed)) {
        throw new TypeError(`PyRandom seed must be an integer, got ${seed}`);
      }
      big = BigInt(seed);
    }
    if (big < 0n) big = -big;
    this.initByArray(seedWords(big));
  }

  /** MT19937 `init_genrand`. */
  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1];
      mt[i] = Math.imul(1812433253, prev ^ (prev >>> 30)) + i;
    }
    this.mti = N;
  }

  /** MT19937 `init_by_array`, as CPython calls it from `random_seed`. */
  private initByArray(key: readonly number[]): void {
    this.initGenrand(19650218);
    const mt = this.mt;
    const keyLength = key.length;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, keyLength); k > 0; k--) {
      const prev = mt[i - 1];
      mt[i] = (mt[i] ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j] + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= keyLength) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1];
      mt[i] = (mt[i] ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** Regenerate all 624 state words (the first half of `genrand_uint32`). */
  private twist(): void {
    const mt = this.mt;
    let kk = 0;
    let y: number;
    for (; kk < N - M; kk++) {
      y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
      mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
      mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
    mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.mti = 0;
  }

  /** The next raw 32-bit output (`genrand_uint32`), as an unsigned integer. */
  nextUint32(): number {
    if (this.mti >= N) this.twist();
    let y = this.mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: a float in [0, 1) with 53 random bits, identical to CPython's. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /**
   * `random.getrandbits(k)` for `0 <= k <= 53` (the range a JS number holds
   * exactly). Words are consumed least significant first, as in CPython.
   */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0 || k > 53) {
      throw new RangeError(`getrandbits: k must be an integer in [0, 53], got ${k}`);
    }
    if (k === 0) return 0;
    if (k <= 32) return this.nextUint32() >>> (32 - k);
    const low = this.nextUint32();
    const high = this.nextUint32() >>> (64 - k);
    return high * 4294967296 + low;
  }

  /**
   * `Random._randbelow(n)` (the getrandbits variant): a uniform integer in
   * `[0, n)`, by rejection sampling on `n.bit_length()` bits. `0 < n < 2**53`:
   * `2**53` itself would need 54 bits, more than `getrandbits` draws exactly.
   */
  randbelow(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > Number.MAX_SAFE_INTEGER) {
      throw new RangeError(`randbelow: n must be an integer in [1, 2**53 - 1], got ${n}`);
    }
    const k = bitLength(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random.randint(a, b)`: a uniform integer in `[a, b]`, both ends included. */
  randint(a: number, b: number): number {
    if (!Number.isInteger(a) || !Number.isInteger(b)) {
      throw new RangeError(`randint: bounds must be integers, got ${a}, ${b}`);
    }
    const width = b + 1 - a;
    if (width <= 0) throw new RangeError(`empty range in randint(${a}, ${b})`);
    return a + this.randbelow(width);
  }

  /** `random.choice(seq)`: one element, chosen uniformly. Throws on an empty sequence. */
  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new RangeError("Cannot choose from an empty sequence");
    return seq[this.randbelow(seq.length)];
  }

  /** `random.shuffle(x)`: shuffle in place with CPython's Fisher-Yates order. */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }
}

/** Python's `int.bit_length()` for a positive safe integer. */
function bitLength(n: number): number {
  return n < 4294967296 ? 32 - Math.clz32(n) : 32 + (32 - Math.clz32(Math.floor(n / 4294967296)));
}
