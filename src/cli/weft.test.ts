import { describe, expect, it } from "vitest";
import { COMMANDS } from "./commands/index.ts";
import { runWeft, testContext } from "./testContext.ts";
import { buildProgram, commandsFor } from "./weft.ts";

describe("weft", () => {
  it("says a command is unknown also with --help or after help, exit 2", async () => {
    const plain = await runWeft(["nanny"]);
    expect(plain.code).toBe(2);
    expect(plain.err).toMatch(/^error: unknown command 'nanny'\n/);
    for (const args of [
      ["nanny", "--help"],
      ["nanny", "-h"],
      ["help", "nanny"],
      ["help", "nanny", "--help"],
      ["--help", "nanny"],
    ]) {
      const r = await runWeft(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.out, args.join(" ")).toBe("");
      expect(r.err, args.join(" ")).toBe(plain.err);
    }
  });

  it("says what to give in place of Dask's options that weft spells otherwise", async () => {
    const port = await runWeft(["scheduler", "--port", "8786"]);
    expect(port.code).toBe(2);
    expect(port.err).toBe(
      "error: unknown option '--port'\n(run with --help for usage)\n" +
        "weft scheduler has no --port (Dask's): use --listen tcp://0.0.0.0:PORT\n",
    );
    const workers = await runWeft(["worker", "tcp://127.0.0.1:1", "--nworkers=4"]);
    expect(workers.code).toBe(2);
    expect(workers.err).toMatch(
      /\nweft worker has no --nworkers \(Dask's\): a weft worker is one process: start as many as you need\n$/,
    );
    // --no-dashboard, which batch scripts give Dask's commands, was an unknown option alone.
    for (const command of ["scheduler", "worker"]) {
      const args = command === "worker" ? [command, "tcp://127.0.0.1:1"] : [command];
      const off = await runWeft([...args, "--no-dashboard"]);
      expect(off.code, command).toBe(2);
      expect(off.err, command).toMatch(
        new RegExp(
          `\nweft ${command} has no --no-dashboard \\(Dask's\\): leave it out: weft serves no HTTP unless given --http-address\n$`,
        ),
      );
    }
    // Not Dask's, or not for this command: commander's error alone.
    for (const args of [
      ["worker", "tcp://127.0.0.1:1", "--bogus"],
      ["run", "graph.json", "--port", "1"],
    ]) {
      const r = await runWeft(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(
        /^error: unknown option '--\w+'\n\(run with --help for usage\)\n$/,
      );
    }
  });

  it("still gives a known command's help, and the top-level help", async () => {
    for (const args of [
      ["status", "--help"],
      ["help", "status"],
    ]) {
      const r = await runWeft(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.out).toMatch(/^Usage: weft status /);
    }
    for (const args of [["--help"], ["help"], ["help", "help"]]) {
      const r = await runWeft(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.out).toMatch(/^Usage: weft \[options\] \[command\]/);
    }
    // The help command's help is that of the command it belongs to.
    const amm = await runWeft(["amm", "help", "help"]);
    expect(amm.code).toBe(0);
    expect(amm.out).toMatch(/^Usage: weft amm \[options\] \[command\]/);
    // Not a help command: `help` is run's file operand, and the extra one an error.
    expect((await runWeft(["run", "help", "help"])).code).toBe(2);
    expect((await runWeft(["--version"])).code).toBe(0);
  });

  it("every command has its --help, and the top-level help lists it", async () => {
    const top = (await runWeft(["--help"])).out;
    for (const entry of COMMANDS) {
      const cmd = (await entry.load())(testContext());
      const name = cmd.name();
      expect(name).toBe(entry.name);
      const r = await runWeft([name, "--help"]);
      expect(r.code, name).toBe(0);
      expect(r.out, name).toMatch(new RegExp(`^Usage: weft ${name} `));
      // Listed with its usage, so that the list says what each command takes.
      expect(top, name).toContain(`\n  ${name} ${cmd.usage()} `);
    }
  });

  it("lists each command as its definition does, so that the help needs none of their modules", async () => {
    const real = await Promise.all(COMMANDS.map((c) => c.load()));
    for (const [i, entry] of COMMANDS.entries()) {
      const cmd = real[i](testContext());
      expect(entry.usage, entry.name).toBe(cmd.usage());
      expect(entry.description, entry.name).toBe(cmd.description());
    }
    // The help listed from the entries is the one listed from the commands themselves.
    const ctx = testContext();
    expect((await runWeft(["--help"])).out).toBe(buildProgram(ctx, real).helpInformation());
  });

  it("loads the module of the command named alone, none for --version or the help", async () => {
    const loads = (args: string[]) => {
      const loaded: string[] = [];
      const entries = COMMANDS.map((c) => ({
        ...c,
        load: () => {
          loaded.push(c.name);
          return c.load();
        },
      }));
      return commandsFor(args, entries).then((made) => ({
        loaded,
        names: made.map((make) => make(testContext()).name()),
      }));
    };
    const every = COMMANDS.map((c) => c.name);
    for (const [args, name] of [
      [["worker", "tcp://127.0.0.1:1", "--nthreads", "2"], "worker"],
      [["scheduler", "--log-level", "debug"], "scheduler"],
      [["help", "status"], "status"],
      [["amm", "start", "--help"], "amm"],
      [["--", "replay", "x.json"], "replay"],
      [["--help", "story"], "story"],
    ] as const) {
      const r = await loads([...args]);
      expect(r.loaded, args.join(" ")).toEqual([name]);
      expect(r.names, args.join(" ")).toEqual(every);
    }
    for (const args of [["--version"], ["-V"]]) {
      expect(await loads(args), args.join(" ")).toEqual({ loaded: [], names: [] });
    }
    for (const args of [[], ["--help"], ["help"], ["help", "help"], ["nanny"], ["-V", "-h"]]) {
      expect(await loads(args), args.join(" ")).toEqual({ loaded: [], names: every });
    }
  });
});
