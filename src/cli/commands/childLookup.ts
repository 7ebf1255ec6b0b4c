/**
 * A host name looked up as `dns.lookup` does (getaddrinfo: /etc/hosts, DNS, every
 * source the system's resolver consults), in a child process killed when the
 * answer is no longer wanted. getaddrinfo cannot be cancelled, and one still
 * running holds its process at exit, `process.exit` included, until the resolver
 * gives up (measured: 9.4 s with glibc's defaults and a DNS server that does not
 * answer): a `weft worker` stopped meanwhile stayed alive that long.
 */

import { spawn } from "node:child_process";

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
    // Its own options, not this process's: a NODE_OPTIONS preload would only slow it.
    const { NODE_OPTIONS: _, ...env } = process.env;
    // After "--", a host that reads as an option (`--cpu-prof`) is the script's argument.
    const child = spawn(process.execPath, ["-e", LOOKUP_SCRIPT, "--", host], {
      stdio: ["ignore", "pipe", "ignore"],
      env,
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
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
