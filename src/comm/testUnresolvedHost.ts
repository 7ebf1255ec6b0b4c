/**
 * A host name that does not resolve, answered at once. A test bounding a
 * start by a short deadline would otherwise hang on the resolver's timing
 * (getaddrinfo took over 400 ms on a loaded host): the resolver's own error
 * for the name, looked up once beforehand, is given again to each lookup of
 * it while the returned restore is not called. Other names resolve as ever.
 */

import dns from "node:dns";
import { vi } from "vitest";

type LookupCallback = (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void;

/** Stub `dns.lookup` (which `net.connect` calls) for `host`; returns the restore. */
export async function answerUnresolvedAtOnce(host: string): Promise<() => void> {
  const real = dns.lookup;
  const failure = await new Promise<NodeJS.ErrnoException>((resolve, reject) =>
    real(host, (err) =>
      err !== null
        ? resolve(err)
        : reject(new Error(`${host} resolves: the test needs a name that does not`)),
    ),
  );
  const spy = vi.spyOn(dns, "lookup").mockImplementation(((name: string, ...rest: unknown[]) => {
    if (name !== host) return Reflect.apply(real, dns, [name, ...rest]);
    const callback = rest.at(-1) as LookupCallback;
    // A fresh error each time, as the resolver gives: a caller may add to the one it gets.
    const { code, errno, syscall } = failure;
    const err = Object.assign(new Error(failure.message), { code, errno, syscall, hostname: host });
    process.nextTick(() => callback(err));
  }) as typeof dns.lookup);
  return () => spy.mockRestore();
}
