/**
 * The options the servers' commands (`weft worker`, `weft scheduler`) share, and
 * the clients' their TLS ones, as their definitions add them. Apart from what
 * reads their values (serveUntil.ts), so that a command's help, which needs only
 * its definition, loads neither TLS nor the comm layer.
 */

import { type Command, Option } from "commander";

/** The log levels `--log-level` accepts. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** The TCP size options of the servers' commands, as given on the command line. */
export interface FrameLimitCliOptions {
  readonly maxFrameBytes?: string;
  readonly maxMessageBytes?: string;
}

/** Add `--max-frame-bytes` and `--max-message-bytes` to `cmd`. */
export function addFrameLimitOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--max-frame-bytes <size>",
        "TCP: larger messages go in several frames of at most this size (default: 64MiB)",
      ),
    )
    .addOption(
      new Option(
        "--max-message-bytes <size>",
        "TCP: the largest message sent or accepted, e.g. a task's value; at least 64KiB (default: 4GiB - 1)",
      ),
    );
}

/** `--tls-ca-file`, `--tls-cert`, `--tls-key` as commander parses them. */
export interface TlsCliOptions {
  readonly tlsCaFile?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
}

/** Options of the HTTP endpoints (`--http-address`, `--metrics-namespace`). */
export interface HttpCliOptions {
  readonly httpAddress?: string;
  readonly metricsNamespace?: string;
}

/** Add `--http-address` and `--metrics-namespace` to `cmd`. */
export function addHttpOptions(cmd: Command): Command {
  return cmd
    .option(
      "--http-address <address>",
      "serve /health, /metrics (Prometheus) and /json/… over HTTP here ([host]:port, e.g. :8787; Dask's --dashboard-address)",
    )
    .option(
      "--metrics-namespace <name>",
      "first word of the metrics' names (Dask's: dask)",
      "weft",
    );
}

/**
 * Add `--preload <module>` (repeatable) to `cmd`, for a `server` ("scheduler",
 * "worker") whose option `preload` it fills.
 */
export function addPreloadOption(cmd: Command, server: "scheduler" | "worker"): Command {
  return cmd.option(
    "--preload <module>",
    `import this module as the ${server} starts and call its weftSetup(${server}) export (e.g. to add ${server === "worker" ? "worker " : ""}plugins), its weftTeardown(${server}) as it closes (waited on 30 s at most, as the plugins are); repeat for more`,
    (v: string, prev: string[]) => [...prev, v],
    [] as string[],
  );
}

/** Add `--tls-ca-file`, `--tls-cert` and `--tls-key` to `cmd` (Dask's names). */
export function addTlsOptions(cmd: Command): Command {
  return cmd
    .option(
      "--tls-ca-file <file>",
      "tls://: the CA certificate (PEM) that signed every certificate of the cluster",
    )
    .option("--tls-cert <file>", "tls://: this process's certificate (PEM), signed by that CA")
    .option("--tls-key <file>", "tls://: the private key (PEM) of that certificate");
}
