/**
 * Dask's `dask scheduler` and `dask worker` options that weft spells another
 * way: `weft scheduler --port 8786` is what a Dask user types first, and
 * commander's "unknown option" alone does not say what to type instead.
 */

const LISTEN_SCHEME = "give the scheme in --listen (tcp://… or tls://…)";

/**
 * Dask serves its dashboard by default, and batch scripts turn it off with
 * `--no-dashboard`: weft serves HTTP only when given an address.
 */
const DASHBOARD = {
  "--dashboard": "use --http-address [HOST]:PORT (/status, /health, /metrics)",
  "--no-dashboard": "leave it out: weft serves no HTTP unless given --http-address",
};
const PID_FILE =
  "weft writes no PID file: the shell's $! after starting it in the background is its PID";

const SCHEDULER: Readonly<Record<string, string>> = {
  "--port": "use --listen tcp://0.0.0.0:PORT",
  "--host": "use --listen tcp://HOST:8786",
  "--interface": "use --listen tcp://ADDRESS:8786, with an address of that interface",
  "--protocol": LISTEN_SCHEME,
  "--dashboard-address": "use --http-address (/status, /health, /metrics)",
  ...DASHBOARD,
  "--pid-file": PID_FILE,
};

const WORKER: Readonly<Record<string, string>> = {
  "--worker-port": "use --listen tcp://0.0.0.0:PORT",
  "--listen-address": "use --listen",
  "--host": "use --listen tcp://HOST:0",
  "--interface": "use --listen tcp://ADDRESS:0, with an address of that interface",
  "--protocol": LISTEN_SCHEME,
  "--dashboard-address": "use --http-address (/status, /health, /metrics)",
  "--local-directory": "use --spill-directory",
  "--nworkers": "a weft worker is one process: start as many as you need",
  "--nprocs": "a weft worker is one process: start as many as you need",
  "--no-nanny": "leave it out: a weft worker runs without a nanny unless given --nanny",
  "--nanny-port": "a weft nanny is the worker's parent process and listens on no port",
  ...DASHBOARD,
  "--pid-file": PID_FILE,
};

const BY_COMMAND: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  scheduler: SCHEDULER,
  worker: WORKER,
};

/**
 * What to give `weft <command>` in place of Dask's `option` (`--port=8786` as
 * well as `--port`), as a line to print after commander's error; null when
 * `option` is not one of Dask's that weft spells otherwise.
 */
export function daskOptionHint(command: string, option: string): string | null {
  const name = option.split("=")[0] as string;
  const instead = BY_COMMAND[command]?.[name];
  if (instead === undefined) return null;
  return `weft ${command} has no ${name} (Dask's): ${instead}`;
}
