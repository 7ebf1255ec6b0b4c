/**
 * A host name looked up as `dns.lookup` does (getaddrinfo: /etc/hosts, DNS, every
 * source the system's resolver consults), in a child process killed when the
 * answer is no longer wanted. getaddrinfo cannot be cancelled, and one still
 * running holds its process at exit, `process.exit` included, until the resolver
 * gives up (measured: 9.4 s with glibc's defaults and a DNS server that does not
 * answer): a `weft worker` stopped meanwhile stayed alive that long. The child, held
 * the same way, dies with its parent (see {@link spawnTiedChild}).
 */

import { type ChildProcess, spawn } from "node:child_process";

/** Prints the addresses as JSON, or null when the name does not resolve. */
const LOOKUP_SCRIPT = `require("node:dns").lookup(process.argv[1], { all: true }, (err, found) => {
  process.stdout.write(JSON.stringify(err ? null : found.map((a) => ({ address: a.address }))));
});`;

/**
 * Every address `host` resolves to here; rejects when it does not resolve, the
 * child cannot be started, or `abandon` aborts (the child is then killed).
 */
export function lookupInChild(
  host: string,
  abandon: AbortSignal,
): Promise<readonly { readonly address: string }[]> {
  return new Promise((resolve, reject) => {
    if (abandon.aborted) {
      reject(new Error("the lookup was abandoned"));
      return;
    }
    const child = spawnTiedChild(LOOKUP_SCRIPT, [host]);
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    const kill = () => {
      child.kill("SIGKILL");
      reject(new Error("the lookup was abandoned"));
    };
    abandon.addEventListener("abort", kill, { once: true });
    const settle = (err: Error | null) => {
      abandon.removeEventListener("abort", kill);
      if (err !== null) return reject(err);
      let found: unknown;
      try {
        found = JSON.parse(out);
      } catch {
        found = null;
      }
      if (Array.isArray(found)) resolve(found as { address: string }[]);
      else reject(new Error(`${host} does not resolve`));
    };
    child.on("error", (err) => settle(err));
    child.on("close", () => settle(null));
  });
}

/**
 * What a tied child runs first: it kills itself once its IPC channel to this process
 * closes, which it does when this process ends, SIGKILLed included (nothing here gets
 * to kill the child then). SIGKILL, as a lookup under way would hold any other exit.
 * Unref'd, the channel does not keep the child alive: it ends when its work does.
 */
const DIE_WITH_PARENT = `process.channel.unref();
process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
`;

/**
 * `node -e script -- ...args`, its stdout piped, that does not outlive this process.
 * After "--", an argument that reads as an option (`--cpu-prof`) is the script's.
 */
export function spawnTiedChild(script: string, args: readonly string[]): ChildProcess {
  // Its own options, not this process's: a NODE_OPTIONS preload would only slow it.
  const { NODE_OPTIONS: _, ...env } = process.env;
  return spawn(process.execPath, ["-e", DIE_WITH_PARENT + script, "--", ...args], {
    stdio: ["ignore", "pipe", "ignore", "ipc"],
    env,
  });
}
