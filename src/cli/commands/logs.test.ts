import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { boom } from "../../client/testTasks.ts";
import { runWeft } from "../testContext.ts";
import { formatLogLine, mergedLines } from "./logsAction.ts";

afterEach(closeTestClusters);

describe("weft logs", () => {
  it("prints the scheduler's and the workers' last records, merged by time", async () => {
    const { cluster, client } = await testCluster({
      logger: pino({ level: "info" }, { write: () => {} }),
    });
    await client.submit(boom, "on purpose").catch(() => {});
    const r = await runWeft(["logs", cluster.address, "--n", "all"]);
    expect(r).toMatchObject({ code: 0, err: "" });
    const lines = r.out.trimEnd().split("\n");
    for (const w of cluster.workers) {
      expect(
        lines.some(
          (l) =>
            l.includes(` INFO  ${w.address}`) &&
            l.includes(": worker started") &&
            // with its context, as logged
            l.includes(" nthreads="),
        ),
      ).toBe(true);
    }
    expect(lines.some((l) => / INFO {2}scheduler/.test(l))).toBe(true);
    const times = lines.map((l) => Date.parse(l.split(" ")[0]));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const one = cluster.workers[0].address;
    const only = await runWeft(["logs", cluster.address, "--no-scheduler", "--worker", one]);
    expect(
      only.out
        .trimEnd()
        .split("\n")
        .every((l) => l.includes(` ${one}`)),
    ).toBe(true);

    const json = await runWeft(["logs", cluster.address, "--json", "--n", "1", "--no-scheduler"]);
    const parsed = JSON.parse(json.out);
    expect(parsed.scheduler).toBeUndefined();
    expect(Object.keys(parsed.workers).sort()).toEqual(
      cluster.workers.map((w) => w.address).sort(),
    );
    for (const records of Object.values(parsed.workers)) expect(records).toHaveLength(1);
    // The scheduler has logged more than one record by now (it listened, workers joined).
    const all = JSON.parse((await runWeft(["logs", cluster.address, "--json", "--n", "all"])).out);
    expect(all.scheduler.length).toBeGreaterThan(1);
    const last = JSON.parse(
      (await runWeft(["logs", cluster.address, "--json", "--n", "1", "--no-workers"])).out,
    );
    expect(last.scheduler).toHaveLength(1);

    const errors = await runWeft(["logs", cluster.address, "--level", "error"]);
    expect(errors.out.split("\n").filter((l) => / (INFO|WARN) /.test(l))).toEqual([]);
    // A level's own records are shown, not only the more severe ones.
    const info = await runWeft(["logs", cluster.address, "--level", "info"]);
    expect(info.out).toMatch(/ INFO {2}scheduler/);
  });

  it("prints the last 100 records of each process by default, every one it keeps with --n all", async () => {
    const { cluster } = await testCluster({
      logger: pino({ level: "info" }, { write: () => {} }),
    });
    for (let i = 0; i < 150; i++) cluster.scheduler.logger.info({ i }, "filler");
    const count = async (...more: string[]) =>
      JSON.parse((await runWeft(["logs", cluster.address, "--json", "--no-workers", ...more])).out)
        .scheduler.length;
    expect(await count()).toBe(100);
    expect(await count("--n", "all")).toBeGreaterThanOrEqual(150);
  });

  it("--n counts the records of --level or more severe: a warning followed by 150 info lines is shown", async () => {
    const { cluster } = await testCluster({
      logger: pino({ level: "info" }, { write: () => {} }),
    });
    cluster.scheduler.logger.warn({ i: -1 }, "the warning");
    for (let i = 0; i < 150; i++) cluster.scheduler.logger.info({ i }, "filler");
    const scheduler = async (...more: string[]) =>
      JSON.parse((await runWeft(["logs", cluster.address, "--json", "--no-workers", ...more])).out)
        .scheduler as { msg: string; level: string }[];
    expect((await scheduler("--level", "warn")).map((r) => r.msg)).toEqual(["the warning"]);
    const infos = await scheduler("--level", "info", "--n", "3");
    expect(infos.map((r) => r.msg)).toEqual(["filler", "filler", "filler"]);
    expect(await scheduler("--level", "warn", "--n", "0")).toEqual([]);
    // A decimal count, as every numeric option reads it (digits alone refused 3e0).
    expect(await scheduler("--level", "info", "--n", "3e0")).toEqual(infos);
  });

  it("reports a --worker that matches no connected worker on stderr, exit 1", async () => {
    const { cluster } = await testCluster({ logger: pino({ level: "info" }, { write: () => {} }) });
    const one = cluster.workers[0].address;
    const r = await runWeft([
      "logs",
      cluster.address,
      "--no-scheduler",
      "--worker",
      one,
      "--worker",
      "tcp://1.2.3.4:5",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `weft logs: --worker tcp://1.2.3.4:5: no connected worker matches it (weft status ${cluster.address} lists them)\n`,
    );
    // The worker that matched still has its records printed.
    expect(r.out).toContain(` ${one} `);
    // With none matching, the same, and no records.
    const none = await runWeft(["logs", cluster.address, "--no-scheduler", "--worker", "nosuch"]);
    expect(none.code).toBe(1);
    expect(none.err).toContain("weft logs: --worker nosuch: no connected worker matches it");
    expect(none.out).not.toContain(` ${one} `);
    // A worker's name matches as its address does (a LocalCluster names them "0", "1").
    const byName = await runWeft(["logs", cluster.address, "--no-scheduler", "--worker", "0"]);
    expect(byName.code).toBe(0);
    expect(byName.err).toBe("");
  });

  it("--help names the servers' --log-level, which decides what they keep ($WEFT_LOG_LEVEL does not)", async () => {
    const r = await runWeft(["logs", "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("for weft scheduler and weft worker,\ntheir --log-level");
    expect(r.out).not.toContain("WEFT_LOG_LEVEL");
  });

  it("refuses bad options", async () => {
    const { cluster } = await testCluster();
    for (const n of ["x", "-1", "", "1.5", "1e-1", "0x10", " 5"]) {
      const badN = await runWeft(["logs", cluster.address, "--n", n]);
      expect(badN, n).toMatchObject({
        code: 2,
        err: `weft logs: --n must be an integer >= 0 or "all", got ${JSON.stringify(n)}\n`,
      });
    }
    // Too large to be exact, not "no integer" as it was said.
    for (const n of ["1e400", "99999999999999999999"]) {
      const tooLarge = await runWeft(["logs", cluster.address, "--n", n]);
      expect(tooLarge, n).toMatchObject({
        code: 2,
        err: `weft logs: --n must be at most 9007199254740991 (Number.MAX_SAFE_INTEGER) or "all", got ${JSON.stringify(n)}\n`,
      });
    }
    const badLevel = await runWeft(["logs", cluster.address, "--level", "loud"]);
    expect(badLevel.code).toBe(2);
    expect(badLevel.err).toContain("--level must be one of trace, debug, info, warn, error, fatal");
    const nothing = await runWeft(["logs", cluster.address, "--no-scheduler", "--no-workers"]);
    expect(nothing.code).toBe(2);
    const unreachable = await runWeft(["logs", "tcp://127.0.0.1:1", "--connect-timeout", "500ms"]);
    expect(unreachable.code).toBe(2);
  });

  it("formats a record as one line", () => {
    const r = {
      time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
      level: "warn",
      msg: "slow",
      name: "weft.worker",
      err: "Error: x",
    };
    expect(formatLogLine("tcp://w:1", r)).toBe(
      "2026-01-02T03:04:05.006Z WARN  tcp://w:1 weft.worker: slow (Error: x)",
    );
    // The context logged with it says which task, worker or peer, and why.
    expect(
      formatLogLine("scheduler", {
        ...r,
        msg: "refused a worker",
        fields: { worker: "tcp://w:2", reason: 'the name "a" is taken', n: 2, empty: "" },
      }),
    ).toBe(
      "2026-01-02T03:04:05.006Z WARN  scheduler weft.worker: refused a worker worker=tcp://w:2 " +
        'reason="the name \\"a\\" is taken" n=2 empty="" (Error: x)',
    );
    expect(
      mergedLines({
        scheduler: [{ time: 2, level: "info", msg: "b" }],
        workers: {
          "tcp://w:1": [
            { time: 1, level: "info", msg: "a" },
            { time: 2, level: "info", msg: "c" },
          ],
        },
      }).map((l) => l.split(": ")[1]),
    ).toEqual(["a", "b", "c"]);
  });
});
