import { describe, expect, it } from "vitest";
import { LOST_INPUT_HELD_MS } from "./lostSpills.ts";
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

  it("refuses a wildcard contact address as one whatever its scheme, saying a wrong scheme too", () => {
    // tls://0.0.0.0 for a tcp:// listener (or foo://) was refused for its scheme alone, as
    // though tls:// would have made 0.0.0.0 an address peers reach.
    const wildcard =
      "0.0.0.0 means every interface to a listener, no address a peer on another host can connect to: give the worker's own host name or IP";
    const refused = (listen: string, contactAddress: string, why: string) =>
      expect(() => resolveWorkerOptions({ scheduler, listen, contactAddress })).toThrow(
        new TypeError(
          `Worker option contactAddress must be an address peers can connect to, such as tcp://10.0.0.1:4000, got "${contactAddress}": ${why}`,
        ),
      );
    refused("tls://0.0.0.0:0", "tls://0.0.0.0:4000", wildcard);
    refused("tcp://0.0.0.0:0", "tcp://0.0.0.0:4000", wildcard);
    refused(
      "tcp://0.0.0.0:0",
      "tls://0.0.0.0:4000",
      `${wildcard}; and this worker listens on tcp:// (listen tcp://0.0.0.0:0), which peers dialling tls:// would not reach`,
    );
    refused(
      "tcp://0.0.0.0:0",
      "foo://0.0.0.0:4000",
      `${wildcard}; and unknown scheme "foo" (inproc, tcp or tls)`,
    );
    // A scheme alone wrong is said alone.
    refused(
      "tcp://0.0.0.0:0",
      "tls://10.0.0.1:4000",
      "this worker listens on tcp:// (listen tcp://0.0.0.0:0), which peers dialling tls:// would not reach",
    );
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

describe("resolveWorkerOptions: lostInputHeldMs", () => {
  it("defaults to LOST_INPUT_HELD_MS, takes a delay, and refuses what no timer waits", () => {
    expect(resolveWorkerOptions({ scheduler }).lostInputHeldMs).toBe(LOST_INPUT_HELD_MS);
    expect(resolveWorkerOptions({ scheduler, lostInputHeldMs: 0 }).lostInputHeldMs).toBe(0);
    expect(resolveWorkerOptions({ scheduler, lostInputHeldMs: 250 }).lostInputHeldMs).toBe(250);
    expect(() => resolveWorkerOptions({ scheduler, lostInputHeldMs: -1 })).toThrow(
      /Worker option lostInputHeldMs must be/,
    );
    expect(() => resolveWorkerOptions({ scheduler, lostInputHeldMs: 2 ** 31 })).toThrow(
      "Worker option lostInputHeldMs must be at most 2147483647 ms (about 24.8 days), got 2147483648",
    );
  });
});
