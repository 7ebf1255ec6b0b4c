/**
 * What `weft profile` does once its command line is parsed: profile.ts, its definition,
 * imports this module only then, so that `weft profile --help` loads none of it.
 */

import { constants } from "node:os";
import type { Client } from "../../client/client.ts";
import { busyMs, type ClusterProfile, type FunctionTime } from "../../client/profile.ts";
import { asError } from "../../util/asError.ts";
import { parseDecimal } from "../../util/decimal.ts";
import { outputProblem } from "../../util/outputFile.ts";
import { plural } from "../../util/plural.ts";
import { writeWholeFile } from "../../util/wholeFile.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { untilSignal } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";
import { noWorkerMatches, unmatchedWorkers, withSchemes } from "./workerSelectors.ts";

/** Options of `weft profile`. */
export interface ProfileCliOptions extends ConnectCliOptions {
  readonly seconds?: string;
  readonly output?: string;
  readonly worker?: readonly string[];
  readonly intervalUs?: string;
  readonly top?: string;
  readonly json?: boolean;
  readonly withScheduler?: boolean;
}

function positiveNumber(flag: string, given: string, max: number): number | string {
  const n = parseDecimal(given);
  return Number.isFinite(n) && n > 0 && n <= max
    ? n
    : `${flag} must be a number above 0 and at most ${max}, got ${JSON.stringify(given)}`;
}

/** In decimal, as every numeric option reads (`1e3` too, which digits alone refused). */
function integer(flag: string, given: string, min: number, max: number): number | string {
  const n = parseDecimal(given);
  return Number.isInteger(n) && n >= min && n <= max
    ? n
    : `${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(given)}`;
}

/** `where` of a function: its file and line, shortened to the file's name for file: URLs. */
function where(f: FunctionTime): string {
  if (f.url === "") return "";
  const line = f.line > 0 ? `:${f.line}` : "";
  return `${f.url}${line}`;
}

/** The summary lines: threads, then the top functions. */
export function summaryLines(p: ClusterProfile<unknown>, top: number, output: string): string[] {
  const sampled = p.threads.reduce((s, t) => s + t.sampledMs, 0);
  const busy = busyMs(p.threads);
  const workers = new Set(p.threads.map((t) => t.worker)).size;
  const lines = [
    `weft profile: ${plural(p.threads.length, "thread")} on ${plural(workers, "worker")}: ` +
      `${(sampled / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s busy; written to ${output}` +
      (p.lostThreads > 0
        ? ` (${plural(p.lostThreads, "thread")} ended while profiled: their samples are lost)`
        : ""),
    "  (open it in Chrome DevTools' Performance panel, VS Code, or speedscope)",
    "",
    "thread                                            sampled s   busy s",
  ];
  for (const t of p.threads) {
    const name = `${t.worker} ${t.thread}`;
    lines.push(
      `${name.padEnd(48)} ${(t.sampledMs / 1000).toFixed(1).padStart(10)} ${((t.sampledMs - t.idleMs) / 1000).toFixed(1).padStart(8)}`,
    );
  }
  lines.push("", "   self ms   share  function");
  for (const f of p.top.slice(0, top)) {
    const share = busy > 0 ? `${((100 * f.selfMs) / busy).toFixed(1)}%` : "-";
    lines.push(
      `${f.selfMs.toFixed(1).padStart(10)} ${share.padStart(7)}  ${f.functionName}${f.url === "" ? "" : `  ${where(f)}`}`,
    );
  }
  return lines;
}

/**
 * Waits `ms`, or less: until SIGINT or SIGTERM (its name, so that the profile of the
 * time so far is still fetched and written, and the workers stop profiling), or until
 * `client` loses its scheduler (thrown: no profile can be fetched then). Null after `ms`.
 */
async function profilingTime(client: Client, ms: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  let elapsed!: () => void;
  const over = new Promise<void>((resolve) => {
    elapsed = resolve;
    timer = setTimeout(resolve, ms);
  });
  try {
    const ended = await Promise.race([
      untilSignal(over).then((signal) => ({ signal })),
      client.closed.then((lost) => ({ lost })),
    ]);
    if ("lost" in ended) throw ended.lost;
    return ended.signal;
  } finally {
    clearTimeout(timer);
    elapsed();
  }
}

/** `weft profile [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runProfile(
  address: string | undefined,
  opts: ProfileCliOptions,
  ctx: CliContext,
): Promise<void> {
  const seconds = positiveNumber("--seconds", opts.seconds ?? "10", 3600);
  const intervalUs = integer("--interval-us", opts.intervalUs ?? "1000", 100, 1_000_000);
  const top = integer("--top", opts.top ?? "20", 0, 50);
  const output = opts.output ?? "profile.cpuprofile";
  const unwritable = await outputProblem(output);
  const problem = [
    seconds,
    intervalUs,
    top,
    unwritable === null ? null : `-o ${output}: ${unwritable}`,
  ].find((x) => typeof x === "string");
  if (problem !== undefined) {
    ctx.stderr.write(`weft profile: ${problem}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  await withClient("profile", { given: address }, opts, ctx, async (client) => {
    const given = await withSchemes(client, opts.worker ?? []);
    // Said as weft logs says it; the workers that match are profiled all the same.
    const unmatched = await unmatchedWorkers(client, given);
    for (const selector of unmatched) {
      ctx.stderr.write(`${noWorkerMatches("profile", selector, client.address)}\n`);
      ctx.exitCode = EXIT.differences;
    }
    if (unmatched.length > 0 && unmatched.length === given.length && !opts.withScheduler) {
      ctx.stderr.write(`weft profile: no worker to profile: ${output} not written\n`);
      return;
    }
    const workers = given.length > 0 ? { workers: given } : {};
    const ms = (seconds as number) * 1000;
    ctx.stderr.write(
      `weft profile: profiling the workers' threads for ${seconds} s (every ${intervalUs} µs)…\n`,
    );
    const profile = await client.profile(() => profilingTime(client, ms), {
      ...workers,
      ...(opts.withScheduler === true ? { scheduler: true } : {}),
      intervalUs: intervalUs as number,
      // Ample: the workers drop a profile nobody fetched only after this. Whole
      // milliseconds, as the client takes them: --seconds 1.0001 is 1000.1 ms.
      maxMs: Math.ceil(ms) + 60_000,
    });
    // Those matching no worker were said above.
    for (const f of profile.failedWorkers.filter((f) => !unmatched.includes(f.worker))) {
      ctx.stderr.write(`weft profile: no profile of ${f.worker}: ${f.reason}\n`);
      ctx.exitCode = EXIT.differences;
    }
    const interrupted = profile.value;
    if (profile.threads.length === 0) {
      ctx.stderr.write(`weft profile: no thread was profiled: ${output} not written\n`);
      ctx.exitCode = EXIT.differences;
    } else {
      try {
        await writeWholeFile(output, JSON.stringify(profile.profile));
      } catch (err) {
        ctx.stderr.write(
          `weft profile: cannot write the profile to ${output}: ${asError(err).message}\n`,
        );
        ctx.exitCode = EXIT.differences;
        return;
      }
      if (opts.json === true) {
        const { value: _, profile: __, ...summary } = profile;
        ctx.stdout.write(`${JSON.stringify({ output, ...summary }, null, 2)}\n`);
      } else {
        for (const line of summaryLines(profile, top as number, output))
          ctx.stdout.write(`${line}\n`);
      }
    }
    if (interrupted !== null) {
      ctx.stderr.write(`weft profile: interrupted (${interrupted}) before ${seconds} s\n`);
      // As a shell reports a command a signal ended: 130 for SIGINT, 143 for SIGTERM.
      ctx.exitCode = 128 + (constants.signals[interrupted as NodeJS.Signals] ?? 0);
    }
  });
}
