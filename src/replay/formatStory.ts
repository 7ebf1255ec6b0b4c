import { formatEpochSeconds } from "./formatTime.ts";
import type { StoryLine } from "./story.ts";

/** A story as text: one line per record, `time  where  record` (`*` marks replayed records). */
export function formatStory(lines: readonly StoryLine[]): string {
  if (lines.length === 0) return "";
  const width = lines.reduce((w, l) => Math.max(w, l.where.length), 0);
  return lines
    .map((l) => {
      const mark = l.source === "replay" ? "*" : " ";
      return `${formatEpochSeconds(l.time)}  ${l.where.padEnd(width)} ${mark} ${l.text}`;
    })
    .join("\n");
}

/** A story as JSON-able values. */
export function storyJson(lines: readonly StoryLine[]): unknown[] {
  return lines.map((l) => ({ time: l.time, where: l.where, source: l.source, record: l.record }));
}
