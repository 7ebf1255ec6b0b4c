import { describe, expect, it } from "vitest";
import { conformanceMain } from "./conformance.ts";

const VECTOR = new URL("../../test/vectors/oracle/scenario-resources.json.gz", import.meta.url)
  .pathname;

function run(args: string[]): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = conformanceMain(["node", "conformance", ...args], {
    stdout: (s) => {
      out += s;
    },
    stderr: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}

describe("npm run conformance", () => {
  it("exits 2 for bad usage, not 1 (the code of a failed vector)", () => {
    const missing = run([]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("error: missing required argument 'paths'");
    const unknown = run(["--bogus", VECTOR]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("error: unknown option '--bogus'");
  });

  it("exits 0 for --help and for vectors that pass", () => {
    const help = run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain(
      "2 a path\ncould not be run (unreadable, or not a valid vector file) or bad usage",
    );
    const ok = run([VECTOR]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("1 passed, 0 failed, 0 skipped");
  });

  it("passes --verbose on to the runner", () => {
    expect(run([VECTOR]).out).toBe("1 passed, 0 failed, 0 skipped\n");
    expect(run(["-v", VECTOR]).out).toMatch(/^ok {3}.*\n1 passed, 0 failed, 0 skipped\n$/);
  });

  it("lets an error that is no usage error through, not passing it off as exit code 2", () => {
    const broken = () =>
      conformanceMain(["node", "conformance", VECTOR], {
        stdout: () => {
          throw new Error("stdout is gone");
        },
        stderr: () => {},
      });
    expect(broken).toThrow("stdout is gone");
  });
});
