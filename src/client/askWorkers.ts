/**
 * Asking every worker of a list the same thing at once (`Client.run`,
 * `Client.loadTaskModules`): the answers in address order, so that the error
 * reported, when there are several, does not depend on which came first.
 */

/**
 * `ask(address)` for each of `addresses`, at once: `{address: answer}` in
 * address order. When `raised(answer)` gives an error for some answer, the
 * first of those (by address) is thrown instead.
 */
export async function askEachWorker<T>(
  addresses: readonly string[],
  ask: (address: string) => Promise<T>,
  raised: (answer: T) => Error | null,
): Promise<Record<string, T>> {
  const sorted = [...addresses].sort();
  const answers = await Promise.all(sorted.map(ask));
  const out: Record<string, T> = {};
  for (let i = 0; i < sorted.length; i++) {
    const error = raised(answers[i]);
    if (error !== null) throw error;
    out[sorted[i]] = answers[i];
  }
  return out;
}
