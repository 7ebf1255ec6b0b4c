/**
 * The task functions of the word-count example (`npm start`), loaded by every
 * worker: generate a chunk of text, count its words, split the counts into
 * partitions by the hash of the word, pick one partition, merge a partition's
 * pieces, and summarise.
 */

import { defineTask } from "../src/worker/taskRegistry.ts";
import {
  type Counts,
  countWords,
  generateText,
  mergeCounts,
  splitCounts,
  summarize,
} from "./wordcountText.ts";

/** Chunk `chunk` of the sample text. */
export const text = defineTask("wordcount.text", generateText);
/** Word counts of a chunk. */
export const count = defineTask("wordcount.count", countWords);
/** A chunk's counts split into partitions by the hash of the word. */
export const split = defineTask("wordcount.split", splitCounts);
/** Partition `j` of a split. */
export const pick = defineTask("wordcount.pick", (parts: readonly Counts[], j: number) => parts[j]);
/** One partition's counts from every chunk, merged. */
export const merge = defineTask("wordcount.merge", mergeCounts);
/** The top words, total and distinct words of the merged partitions. */
export const summary = defineTask("wordcount.summary", summarize);
