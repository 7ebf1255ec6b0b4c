/**
 * What `weft run` does once its command line is parsed: run.ts, its definition,
 * imports this module only then, so that `weft run --help` loads none of it.
 */

import { constants } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { type DestinationStream, pino } from "pino";
import { Client } from "../../client/client.ts";
import { CancelledError, NoWorkerError, RemoteTaskError } from "../../client/errors.ts";
import { tasksToRun } from "../../client/graph.ts";
import { LocalCluster } from "../../client/localCluster.ts";
import { busyMs, type ClusterProfile } from "../../client/profile.ts";
import { watchProgress } from "../../client/progress.ts";
import { printedTo, TASK_OUTPUT_TOPICS } from "../../client/taskPrint.ts";
import type { FrameLimits } from "../../comm/comm.ts";
import type { TlsCredentials } from "../../comm/tls.ts";
import { weftLogger } from "../../util/logger.ts";
import { outputProblem } from "../../util/outputFile.ts";
import { plural } from "../../util/plural.ts";
import { readSchedulerFile } from "../../util/schedulerFile.ts";
import { writeWholeFile } from "../../util/wholeFile.ts";
import { warnBareMilliseconds } from "./bareMilliseconds.ts";
import { sayingItWaitsForAnswer } from "./connectNotice.ts";
import { type CliContext, EXIT } from "./context.ts";
import { GraphInputError, jsonFriendly, loadGraphInput, STDIN_FILE } from "./graphInput.ts";
import { graphTasksHint } from "./graphTasksHint.ts";
import { reachableHttpUrl } from "./httpUrlShown.ts";
import { checkInprocScheduler } from "./inprocScheduler.ts";
import { listenFailureMessage } from "./listenFailure.ts";
import { connectThroughSchedulerFile } from "./liveSchedulerFile.ts";
import { memoryLimitOption } from "./memoryLimitOption.ts";
import { withOptionFlags } from "./optionFlags.ts";
import { waitingForFileLine, waitingForSchedulerLine } from "./schedulerChoice.ts";
import type { FrameLimitCliOptions, TlsCliOptions } from "./serverOptions.ts";
import {
  frameLimitsFrom,
  MAX_POOL_THREADS,
  positiveInt,
  requireTlsScheme,
  timeoutMs,
  tlsFrom,
  untilSignal,
} from "./serveUntil.ts";
import { splitKeyHint } from "./splitKeyHint.ts";
import { divertStdout } from "./stdoutDiversion.ts";
import { checkGraphTaskModules, taskModuleOption } from "./taskModuleOption.ts";
import { uploadProblem } from "./uploadAction.ts";

/** Options of `weft run`. */
export interface RunOptions extends FrameLimitCliOptions, TlsCliOptions {
  readonly scheduler?: string;
  readonly schedulerFile?: string;
  readonly workers?: string;
  readonly nthreads?: string;
  readonly executor?: "threads" | "inline";
  readonly memoryLimit?: string;
  readonly httpAddress?: string;
  readonly tasks: readonly string[];
  readonly upload: readonly string[];
  readonly taskStream?: string;
  readonly profile?: string;
  readonly keys?: string;
  readonly key: readonly string[];
  readonly progress: boolean;
  readonly validate?: boolean;
  readonly connectTimeout?: string;
  readonly logLevel: string;
}

/**
 * --profile: `get(client)` while the workers' threads are profiled (see
 * `Client.profile`); `written` is told of the profile, to write once the values
 * are printed. The workers stop by themselves after an hour, so that a run
 * interrupted leaves them no profiler running for long.
 */
async function profiled<T>(
  client: Client,
  get: (c: Client) => Promise<T>,
  written: (p: ClusterProfile<T>) => void,
): Promise<T> {
  const p = await client.profile(() => get(client), { maxMs: PROFILE_MAX_MS });
  written(p);
  return p.value;
}

/** The line `weft run --profile` says once the profile is written. */
function profileLine(p: ClusterProfile<unknown>, path: string): string {
  const busy = busyMs(p.threads);
  const top = p.top
    .slice(0, 3)
    .map((f) => `${f.functionName} ${busy > 0 ? ((100 * f.selfMs) / busy).toFixed(0) : 0}%`)
    .join(", ");
  return `weft run: profile of ${plural(p.threads.length, "thread")} written to ${path} (${(busy / 1000).toFixed(1)} s busy${top === "" ? "" : `: ${top}`})`;
}

/** How long `--profile` lets the workers profile. */
const PROFILE_MAX_MS = 3_600_000;

/** How long an interrupted `--profile` waits for the workers to stop profiling. */
const PROFILE_STOP_WAIT_MS = 10_000;

function describeFailure(err: unknown): string {
  if (err instanceof RemoteTaskError) {
    // A task whose error had no frames (a stack of its first line alone) has none to show:
    // a blank line was printed in their place.
    const traceback = err.tracebackText.trimEnd();
    return traceback === "" ? err.message : `${err.message}\n${traceback}`;
  }
  if (err instanceof NoWorkerError || err instanceof CancelledError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Where the embedded cluster logs: its lines are held back while it starts,
 * then written in order, or dropped with every later one (a failed start's
 * pool threads report their failure after the start has given up).
 */
class HeldLines implements DestinationStream {
  private held: string[] | null = [];
  private dropping = false;
  constructor(private readonly target: DestinationStream) {}
  write(line: string): void {
    if (this.dropping) return;
    if (this.held === null) this.target.write(line);
    else this.held.push(line);
  }
  /** Write the lines held back and the later ones (`keep`), or drop them all. */
  release(keep: boolean): void {
    const held = this.held ?? [];
    this.held = null;
    this.dropping = !keep;
    if (keep) for (const line of held) this.target.write(line);
  }
}

/** Levels at which a failed start's records are all the failure weft run reports in one line. */
const QUIET_LEVELS: readonly string[] = ["error", "fatal", "silent"];

/** The most workers an embedded cluster may have: each is a thread pool in this process. */
const MAX_WORKERS = 256;

/**
 * The keys `--keys` (comma-separated, trimmed) and `--key` (each exactly as written:
 * Dask's tuple keys hold commas) name, or undefined for the input's default.
 */
function wantedKeys(opts: Pick<RunOptions, "keys" | "key">): string[] | undefined {
  if (opts.keys === undefined && opts.key.length === 0) return undefined;
  const listed = (opts.keys ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  const keys = [...new Set([...listed, ...opts.key])];
  if (keys.length === 0) throw new Error("--keys names no key");
  return keys;
}

/**
 * `weft run FILE`: compute the graph, print `{key: value}` as JSON on stdout. What
 * else this process writes to stdout meanwhile (a task's `console.log`, a graph
 * module's) goes to stderr, as a task's `print` does: stdout is the answer alone.
 */
export async function runGraph(
  file: string,
  opts: RunOptions,
  ctx: CliContext,
  logTo: DestinationStream = pino.destination({ dest: 2, sync: true }),
): Promise<void> {
  const diversion = divertStdout(process.stdout, ctx.stderr);
  try {
    await computeGraph(file, opts, ctx, logTo, (text) => diversion.write(ctx.stdout, text));
  } finally {
    // The process's own stdout stays diverted until it exits: a timer of an inline task
    // or of the graph module that fires once the answer is written (the process waits
    // for it) put its line after the JSON. Nothing of weft's is written there after it.
    if (ctx.stdout !== process.stdout) diversion.restore();
  }
}

/** {@link runGraph}, its answer written with `answer`. */
async function computeGraph(
  file: string,
  opts: RunOptions,
  ctx: CliContext,
  logTo: DestinationStream,
  answer: (text: string) => void,
): Promise<void> {
  // `-` is the graph on stdin, which errors name so.
  const shown = file === STDIN_FILE ? "stdin" : file;
  let input: Awaited<ReturnType<typeof loadGraphInput>>;
  let workers: number;
  let nthreads: number;
  let extraModules: string[];
  let limits: FrameLimits;
  let secure: { tls?: TlsCredentials } = {};
  let connectTimeoutMs: number;
  let memoryLimit: number | "auto" | undefined;
  let wanted: string[] | undefined;
  let toRun: ReturnType<typeof tasksToRun>;
  // --scheduler-file is --scheduler, read from the file: once every other option and the
  // graph are checked, so that a mistake in them is said at once, not after the wait.
  const remote = opts.scheduler !== undefined || opts.schedulerFile !== undefined;
  let address = opts.scheduler;
  try {
    if (opts.scheduler !== undefined && opts.schedulerFile !== undefined) {
      throw new Error("give --scheduler or --scheduler-file, not both");
    }
    wanted = wantedKeys(opts);
    if (!remote && opts.connectTimeout !== undefined) {
      throw new Error("--connect-timeout applies with --scheduler only");
    }
    if (remote) {
      const embeddedOnly = [
        opts.workers !== undefined && "--workers",
        opts.nthreads !== undefined && "--nthreads",
        opts.executor !== undefined && "--executor",
        opts.memoryLimit !== undefined && "--memory-limit",
        opts.httpAddress !== undefined && "--http-address",
        opts.validate === true && "--validate",
      ].filter((o) => o !== false);
      if (embeddedOnly.length > 0) {
        throw new Error(
          `${embeddedOnly.join(", ")} ${embeddedOnly.length === 1 ? "applies" : "apply"} to the embedded cluster only, not with --scheduler (the scheduler's workers are already running, with their own threads and executor)`,
        );
      }
    }
    if (!remote && opts.upload.length > 0) {
      throw new Error(
        "--upload applies with --scheduler only (an embedded cluster's workers import --tasks from this machine)",
      );
    }
    workers = positiveInt("--workers", opts.workers ?? "2");
    if (workers > MAX_WORKERS) {
      throw new Error(`--workers must be at most ${MAX_WORKERS} (one process), got ${workers}`);
    }
    limits = frameLimitsFrom(opts);
    // The embedded cluster's messages stay in this process, in no frame: they were ignored.
    const tcpOnly = [
      opts.maxFrameBytes !== undefined && "--max-frame-bytes",
      opts.maxMessageBytes !== undefined && "--max-message-bytes",
    ].filter((o) => o !== false);
    if (!remote && tcpOnly.length > 0) {
      throw new Error(
        `${tcpOnly.join(" and ")} ${tcpOnly.length === 1 ? "applies" : "apply"} with --scheduler only (the embedded cluster's messages do not go over TCP)`,
      );
    }
    if (!remote && tlsFrom(opts).tls !== undefined) {
      throw new Error("--tls-ca-file, --tls-cert and --tls-key apply with --scheduler only");
    }
    secure = tlsFrom(opts);
    if (opts.scheduler !== undefined) {
      requireTlsScheme(opts.scheduler, secure);
      checkInprocScheduler(opts.scheduler);
    }
    connectTimeoutMs = timeoutMs("--connect-timeout", opts.connectTimeout ?? "30000");
    warnBareMilliseconds(ctx.stderr, "run", [["--connect-timeout", opts.connectTimeout]]);
    nthreads = positiveInt("--nthreads", opts.nthreads ?? "1");
    if (opts.executor !== "inline" && workers * nthreads > MAX_POOL_THREADS) {
      throw new Error(
        `--workers × --nthreads must be at most ${MAX_POOL_THREADS} (one process: each thread is a V8 isolate, all started at once; --executor inline starts none), got ${workers} × ${nthreads}`,
      );
    }
    memoryLimit = opts.memoryLimit === undefined ? undefined : memoryLimitOption(opts.memoryLimit);
    // Checked before the cluster starts, in the option's words.
    extraModules = opts.tasks.map((t) => taskModuleOption(t, !remote));
    // Written once the graph is computed: a path that cannot be is said before.
    for (const [flag, path] of [
      ["--task-stream", opts.taskStream],
      ["--profile", opts.profile],
    ] as const) {
      const problem = path === undefined ? null : await outputProblem(path);
      if (problem !== null) throw new Error(`${flag} ${path}: ${problem}`);
    }
    for (const path of opts.upload) {
      const problem = await uploadProblem(path);
      if (problem !== null) throw new Error(`--upload ${path}: ${problem}`);
    }
    input = await loadGraphInput(file, {
      stream: process.stdin,
      onTerminal: () =>
        ctx.stderr.write("weft run: reading a JSON graph from stdin: end it with Ctrl-D\n"),
    });
    if (!remote) checkGraphTaskModules(shown, input.taskModules);
    // A key the graph does not have, or a cycle, is said before a cluster starts or a
    // scheduler is waited for (it was said once a cluster had started, seconds later).
    try {
      toRun = tasksToRun(input.graph, wanted ?? input.keys);
    } catch (err) {
      throw new Error(`${shown}: ${(err as Error).message}${splitKeyHint(opts.keys, input.graph)}`);
    }
    if (opts.schedulerFile !== undefined) {
      const path = opts.schedulerFile;
      const read = await readSchedulerFile(path, {
        timeoutMs: connectTimeoutMs,
        // Said at once, as `weft status` says it: the wait may last --connect-timeout.
        onWaiting: () => ctx.stderr.write(waitingForFileLine("run", path, connectTimeoutMs)),
      });
      requireTlsScheme(read, secure);
      address = read;
    }
  } catch (err) {
    ctx.stderr.write(`weft run: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const keys = wanted ?? input.keys;
  // An embedded worker that fails to start (a --tasks module that does not load) logs
  // it at error level, with the stack, once per pool thread: a multi-KB JSON record
  // beside the one-line error below that says the same. Held until the cluster has
  // started; at the quiet levels, dropped if it did not.
  const startLog = address === undefined ? new HeldLines(logTo) : null;
  const logger = weftLogger(undefined, opts.logLevel, startLog ?? logTo);
  let cluster: LocalCluster | null = null;
  let client: Client | null = null;
  let startedAt: number | null = null;
  /** --profile: the profile, once the graph is computed. */
  const profiling: { done: ClusterProfile<unknown> | null } = { done: null };
  /** --task-stream: the runs the scheduler recorded since the graph was submitted, as JSON. */
  const writeTaskStream = async (): Promise<void> => {
    if (opts.taskStream === undefined || client === null || startedAt === null) return;
    const runs = await client.getTaskStream({ since: startedAt });
    try {
      await writeWholeFile(opts.taskStream, `${JSON.stringify(runs, null, 2)}\n`);
    } catch (err) {
      throw new Error(
        `cannot write the task stream to ${opts.taskStream}: ${(err as Error).message}`,
      );
    }
  };
  try {
    try {
      if (address !== undefined) {
        const first = address;
        let dialled = address;
        client = await sayingItWaitsForAnswer(
          (line) => ctx.stderr.write(line),
          "run",
          () => dialled,
          connectTimeoutMs,
          (said) => {
            const connect = (where: string | (() => Promise<string>)): Promise<Client> =>
              Client.connect(where, {
                logger,
                timeoutMs: connectTimeoutMs,
                onWaiting: ({ address: at, reason }) => {
                  said();
                  ctx.stderr.write(waitingForSchedulerLine("run", at, reason, connectTimeoutMs));
                },
                printTaskOutput: false,
                ...limits,
                ...secure,
              });
            // A file naming a scheduler gone is read again until one accepts, as a worker does.
            return connectThroughSchedulerFile(
              opts.schedulerFile,
              first,
              connectTimeoutMs,
              (next) => {
                requireTlsScheme(next, secure);
                dialled = next;
              },
              connect,
            );
          },
        );
        // --upload, then --tasks: the running workers take them, and so will those joining later.
        for (const path of opts.upload) await client.uploadFile(path);
        if (extraModules.length > 0) await client.loadTaskModules(extraModules);
      } else {
        // Each worker starts a thread pool: many take a while, which should not look like a hang.
        if (opts.progress && workers >= 8) {
          ctx.stderr.write(`weft run: starting ${workers} workers…\n`);
        }
        cluster = await LocalCluster.start({
          workers,
          threadsPerWorker: nthreads,
          executor: opts.executor ?? "threads",
          taskModules: [...input.taskModules, ...extraModules],
          validate: opts.validate === true,
          ...(memoryLimit !== undefined ? { worker: { memoryLimit } } : {}),
          ...(opts.httpAddress !== undefined
            ? { scheduler: { httpAddress: opts.httpAddress } }
            : {}),
          logger,
        });
        startLog?.release(true);
        client = await cluster.client({ printTaskOutput: false });
        const http = cluster.scheduler.httpUrl;
        if (http !== null)
          ctx.stderr.write(`weft run: status at ${reachableHttpUrl(http) ?? http}/status\n`);
      }
      // What tasks print goes to stderr: stdout is the answer, JSON.
      for (const [topic] of TASK_OUTPUT_TOPICS) {
        await client.subscribeTopic(
          topic,
          printedTo((text) => ctx.stderr.write(`${text}\n`)),
        );
      }
    } catch (err) {
      // A scheduler that cannot be reached, a task module that does not load: unusable input.
      const quiet = QUIET_LEVELS.includes(opts.logLevel);
      // The cluster did not start (else its lines pass already): nothing more will run.
      const failedStart = address === undefined && cluster === null;
      if (failedStart) startLog?.release(!quiet);
      // The embedded cluster's refusals name its options (Scheduler option httpAddress,
      // cannot serve HTTP at …): the user gave weft run's flags.
      const message = failedStart
        ? withOptionFlags(listenFailureMessage(err, { httpAddress: opts.httpAddress }))
        : (err as Error).message;
      ctx.stderr.write(`weft run: ${message}\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
    const total = toRun.length;
    if (cluster !== null) {
      // A function no task module defines would fail its task on a worker, with a stack
      // from inside weft: unusable input, said before anything runs.
      const known = new Set(cluster.workers[0].taskNames);
      const unknown = [...new Set(toRun.map((task) => task.spec.fn))].filter((f) => !known.has(f));
      if (unknown.length > 0) {
        ctx.stderr.write(
          `weft run: ${shown}: no task module defines ${unknown
            .slice(0, 5)
            .map((f) => JSON.stringify(f))
            .join(", ")}${unknown.length > 5 ? ", …" : ""} (${
            known.size > 0
              ? `the task modules define ${[...known].sort().join(", ")}`
              : input.taskModules.length + extraModules.length > 0
                ? // Modules given that register nothing: plain exports are not task functions.
                  "the task modules given define no task: a task module registers each function with defineTask(name, fn)"
                : 'no task module was given: --tasks ./tasks.ts, or "tasks" in the graph file'
          })\n`,
        );
        ctx.exitCode = EXIT.usage;
        return;
      }
    }
    const progress = opts.progress
      ? await watchProgress(client, total, { stream: ctx.stderr, label: "weft run" })
      : null;
    // Ctrl-C (or SIGTERM) while computing: stop the progress bar, which gives the
    // terminal back its cursor and line wrapping (killed by the signal, it left them
    // off), and close the cluster or the connection (the scheduler releases the graph).
    let finished = (): void => {};
    const interrupted = untilSignal(new Promise<void>((r) => (finished = r)));
    let result: Record<string, unknown>;
    let signal: string | null;
    startedAt = Date.now() / 1000;
    try {
      const get = (c: Client) => c.get(input.graph, keys === undefined ? {} : { keys });
      // --profile: the code profiled ends with the signal too, so that the workers'
      // profilers are stopped: left, a running scheduler's workers profiled on for the
      // hour of PROFILE_MAX_MS, refusing every other profile meanwhile.
      const computing =
        opts.profile === undefined
          ? get(client)
          : profiled(
              client,
              (c) => Promise.race([get(c), interrupted.then(() => ({}))]),
              (p) => {
                profiling.done = p;
              },
            );
      signal = await Promise.race([computing.then(() => null), interrupted]);
      result = signal === null ? await computing : {};
      if (signal !== null && opts.profile !== undefined) {
        // A second Ctrl-C ends the process at once, should a worker not answer.
        const bound = sleep(PROFILE_STOP_WAIT_MS, undefined, { ref: false });
        await Promise.race([computing.catch(() => {}), bound]);
      }
    } finally {
      finished();
      await progress?.stop();
    }
    if (signal !== null) {
      ctx.stderr.write(`weft run: interrupted (${signal})\n`);
      // As a shell reports a command a signal ended: 130 for SIGINT, 143 for SIGTERM.
      ctx.exitCode = 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
      return;
    }
    try {
      await writeTaskStream();
    } catch (err) {
      // Computed all the same: the values are printed, the exit code says what failed.
      ctx.stderr.write(`weft run: ${(err as Error).message}\n`);
      ctx.exitCode = EXIT.usage;
    }
    if (opts.profile !== undefined && profiling.done !== null) {
      try {
        await writeWholeFile(opts.profile, JSON.stringify(profiling.done.profile));
        ctx.stderr.write(`${profileLine(profiling.done, opts.profile)}\n`);
      } catch (err) {
        ctx.stderr.write(
          `weft run: cannot write the profile to ${opts.profile}: ${(err as Error).message}\n`,
        );
        ctx.exitCode = EXIT.usage;
      }
    }
    answer(`${JSON.stringify(jsonFriendly(result), null, 2)}\n`);
  } catch (err) {
    const invalidGraph = err instanceof RemoteTaskError && err.remoteName === "InvalidGraph";
    if (err instanceof TypeError || err instanceof GraphInputError || invalidGraph) {
      ctx.stderr.write(`weft run: ${shown}: ${err.message}\n`);
      ctx.exitCode = EXIT.usage;
    } else {
      ctx.stderr.write(`weft run: ${describeFailure(err)}\n`);
      const hint = address === undefined ? "" : graphTasksHint(err, shown, input.taskModules);
      if (hint !== "") ctx.stderr.write(`weft run: ${hint}\n`);
      ctx.exitCode = EXIT.differences;
      // The runs up to the failure, for a look at what happened.
      await writeTaskStream().catch((e: unknown) => {
        ctx.stderr.write(`weft run: ${(e as Error).message}\n`);
      });
    }
  } finally {
    if (cluster !== null) await cluster.close();
    else await client?.close();
  }
}
