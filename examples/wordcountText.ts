/**
 * The pure functions of the word-count example: generating the sample text
 * deterministically, counting words, partitioning counts by a hash of the
 * word, merging, and summarising. The task module wraps them as tasks; the
 * example also calls them directly to check the cluster's answer.
 */

/** Word counts. */
export type Counts = Map<string, number>;

/** The answer: the most frequent words, the number of words and of distinct words. */
export interface WordcountSummary {
  readonly top: readonly (readonly [word: string, count: number])[];
  readonly total: number;
  readonly distinct: number;
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "or", "ni", "pe", "dra", "ux"];

/** The `i`-th word of the vocabulary: short words first. */
function word(i: number): string {
  let w = "";
  let n = i;
  do {
    w += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  } while (n > 0);
  return w;
}

/**
 * Chunk `chunk` of the sample text: `words` words drawn from a vocabulary of
 * `vocabulary` words with a Zipf-like law (word i about 1/(i+1) as often as
 * the first), separated by spaces and the odd newline.
 */
export function generateText(
  seed: number,
  chunk: number,
  words: number,
  vocabulary = 5_000,
): string {
  const rand = random(seed * 1_000_003 + chunk);
  const logV = Math.log(vocabulary + 1);
  const parts: string[] = new Array(words);
  for (let i = 0; i < words; i++) {
    // Inverse transform of the continuous 1/x law on [1, V+1).
    const rank = Math.floor(Math.exp(rand() * logV)) - 1;
    parts[i] = word(Math.min(rank, vocabulary - 1));
  }
  return parts.join(rand() < 0.5 ? " " : "\n");
}

/** How often each word occurs in `text` (words are runs of letters, lower-cased). */
export function countWords(text: string): Counts {
  const counts: Counts = new Map();
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return counts;
}

/** FNV-1a hash of a word. */
export function hashWord(w: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < w.length; i++) {
    h ^= w.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** `counts` split into `partitions` maps by the hash of the word. */
export function splitCounts(counts: Counts, partitions: number): Counts[] {
  const parts: Counts[] = Array.from({ length: partitions }, () => new Map());
  for (const [w, n] of counts) parts[hashWord(w) % partitions].set(w, n);
  return parts;
}

/** The sum of several word counts. */
export function mergeCounts(parts: readonly Counts[]): Counts {
  const out: Counts = new Map();
  for (const part of parts) for (const [w, n] of part) out.set(w, (out.get(w) ?? 0) + n);
  return out;
}

/** The `n` most frequent words (ties by word), the total and the number of distinct words. */
export function summarize(counts: readonly Counts[], n: number): WordcountSummary {
  let total = 0;
  let distinct = 0;
  const all: [string, number][] = [];
  for (const c of counts) {
    for (const [w, k] of c) {
      all.push([w, k]);
      total += k;
      distinct++;
    }
  }
  all.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { top: all.slice(0, n), total, distinct };
}
