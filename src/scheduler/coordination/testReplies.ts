import type { Reply } from "./waiters.ts";

/**
 * For tests: a {@link Reply} that records each answer as `client#request=result`, and
 * reports as undeliverable (false, nothing recorded) the answers to clients in `gone`.
 */
export function replies(gone: ReadonlySet<string> = new Set()): { sent: string[]; reply: Reply } {
  const sent: string[] = [];
  const reply: Reply = (c, id, r) => {
    if (gone.has(c)) return false;
    sent.push(`${c}#${id}=${JSON.stringify(r)}`);
    return true;
  };
  return { sent, reply };
}
