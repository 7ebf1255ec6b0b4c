import { describe, expect, it } from "vitest";
import { resolveWorkerOptions } from "./workerOptions.ts";

const scheduler = "tcp://127.0.0.1:1";

describe("resolveWorkerOptions: what a bad value's refusal shows", () => {
  // These refusals showed the value with JSON.stringify, which throws on a BigInt
  // ("Do not know how to serialize a BigInt", naming no option) and prints NaN as
  // null and a symbol as undefined.
  it("names the option and shows a BigInt, NaN or a symbol as it is", () => {
    const refusals: [Record<string, unknown>, string][] = [
      [
        { memoryLimit: 10n },
        'Worker option memoryLimit must be a size of at least 1 byte, got "10n"',
      ],
      [
        { memoryLimit: Number.NaN },
        "Worker option memoryLimit must be a size of at least 1 byte, got NaN",
      ],
      [
        { memoryLimit: 1e9, memoryMeasure: 5n },
        'Worker option memoryMeasure must be "managed", "process" or a function giving bytes, got "5n"',
      ],
      [{ validate: 1n }, 'Worker option validate must be true or false, got "1n"'],
      [{ name: 5n }, 'Worker option name must be a non-empty string, got "5n"'],
      [
        { executor: Symbol("x") },
        'Worker option executor must be "threads" or "inline", got Symbol(x)',
      ],
      [
        { contactAddress: 5n },
        'Worker option contactAddress must be an address peers can connect to, such as tcp://10.0.0.1:4000, got "5n": not an address',
      ],
      [{ taskModules: [5n] }, 'taskModules: expected a file URL or path, got "5n"'],
      // Taken before: a peer on another host dialled its own machine there.
      // The others too, taken until 2026-12-07: `0` (as in `nc -l 0`) and `0.0` are 0.0.0.0
      // to the resolver, as is the IPv4-mapped one.
      ...[
        "tcp://0.0.0.0:4000",
        "tcp://[::]:4000",
        "tcp://[0:0:0:0:0:0:0:0]:4000",
        "tcp://0:4000",
        "tcp://0.0:4000",
        "tcp://000.000.000.000:4000",
        "tcp://[::ffff:0.0.0.0]:4000",
      ].map((contactAddress): [Record<string, unknown>, string] => [
        { contactAddress },
        `Worker option contactAddress must be an address peers can connect to, such as tcp://10.0.0.1:4000, got "${contactAddress}": `,
      ]),
    ];
    // Said as what the resolver reads it as.
    refusals.push([
      { contactAddress: "tcp://0:4000" },
      'got "tcp://0:4000": 0 (0.0.0.0 to the resolver) means every interface to a listener',
    ]);
    for (const [options, message] of refusals) {
      expect(() => resolveWorkerOptions({ scheduler, ...options } as never)).toThrow(message);
    }
  });
});

describe("resolveWorkerOptions: threads", () => {
  it("refuses more pool threads than one process starts, and takes them with executor inline", () => {
    // A million were started at once, until the process ran out of memory (a fatal V8 error).
    expect(() => resolveWorkerOptions({ scheduler, nthreads: 1025 })).toThrow(
      new RangeError(
        'Worker option nthreads must be at most 1024 with the threads executor (each thread is a V8 isolate, all started at once; executor "inline" starts none), got 1025',
      ),
    );
    expect(resolveWorkerOptions({ scheduler, nthreads: 1024 }).nthreads).toBe(1024);
    expect(resolveWorkerOptions({ scheduler, nthreads: 5000, executor: "inline" }).nthreads).toBe(
      5000,
    );
  });
});
