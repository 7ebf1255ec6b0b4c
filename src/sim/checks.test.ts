/**
 * The end-of-run checks on their own: a finished run passes them, and each
 * thing they are there to catch, planted in that run, fails them with its own
 * message. (The seeded runs only show that a sound cluster passes; the broken
 * variants reach a few of these paths, not each.)
 */

import { describe, expect, test } from "vitest";
import { checkEmpty, checkOutcomes, checkPauses, checkReplicas } from "./checks.ts";
import { NO_FAULTS } from "./faults.ts";
import type { SimHooks } from "./hooks.ts";
import { formatFailure } from "./report.ts";
import { Simulation, simulate } from "./simulation.ts";
import type { SimWorker } from "./simWorker.ts";
import { SimActorRef, SimValue } from "./values.ts";

/**
 * A finished run (not released) with a wanted key in memory on a live worker and a
 * wanted key erred with an injected error; no actors, so every value is a `SimValue`.
 */
function finished(): { sim: Simulation; inMemory: string; holder: SimWorker; erred: string } {
  for (let seed = 1; seed <= 40; seed++) {
    const sim = new Simulation({
      seed,
      tasks: 20,
      workers: 3,
      actors: 0,
      faults: { ...NO_FAULTS, error: 0.2 },
      releasePhase: false,
    });
    const r = sim.run();
    expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
    const wanted = sim.workload.wanted.map((i) => sim.workload.tasks[i].key);
    const inMemory = wanted.find((k) => sim.client.status.get(k) === "memory");
    const erred = wanted.find((k) => sim.client.status.get(k) === "erred");
    if (inMemory === undefined || erred === undefined) continue;
    const ws = [...(sim.scheduler.state.tasks.get(inMemory)?.whoHas ?? [])][0];
    const holder = sim.workers.get(ws.address);
    if (holder?.alive === true) return { sim, inMemory, holder, erred };
  }
  throw new Error("no run in seeds 1..40 ended with a wanted key in memory and one erred");
}

/** Run `plant`, expect `check` to throw `message`, then undo and expect it to pass again. */
function caught(check: () => void, message: RegExp, plant: () => () => void): void {
  check();
  const undo = plant();
  expect(check).toThrow(message);
  undo();
  check();
}

describe("checkReplicas", () => {
  test("a value held by a live worker with another number, or another key's, is a wrong value", () => {
    const { sim, inMemory, holder } = finished();
    const x = sim.checkInput();
    const right = holder.state.data.get(inMemory) as SimValue;
    const put = (v: unknown) => () => {
      holder.state.data.set(inMemory, v);
      return () => holder.state.data.set(inMemory, right);
    };
    const check = () => checkReplicas(x);
    caught(check, /holds .* expected/, put(new SimValue(inMemory, (right.v + 1) >>> 0, 8)));
    caught(check, /holds .* expected/, put(new SimValue("other", right.v, 8)));
    // A dead worker's memory is gone with it: not checked.
    holder.state.data.set(inMemory, new SimValue(inMemory, (right.v + 1) >>> 0, 8));
    holder.alive = false;
    check();
    holder.alive = true;
    holder.state.data.set(inMemory, right);
  });
});

describe("checkOutcomes", () => {
  test("a key the client says is in memory: the scheduler agrees, and every holder it names is alive and holds the right value", () => {
    const { sim, inMemory, holder } = finished();
    const x = sim.checkInput();
    const check = () => checkOutcomes(x);
    const ts = sim.scheduler.state.tasks.get(inMemory);
    if (ts === undefined) throw new Error("unknown to the scheduler");
    caught(check, /in memory; the scheduler says processing/, () => {
      ts.state = "processing";
      return () => {
        ts.state = "memory";
      };
    });
    caught(check, /is held by .*, which is dead/, () => {
      holder.alive = false;
      return () => {
        holder.alive = true;
      };
    });
    const right = holder.state.data.get(inMemory) as SimValue;
    const put = (v: unknown) => () => {
      holder.state.data.set(inMemory, v);
      return () => holder.state.data.set(inMemory, right);
    };
    // A handle with the right number is not the value.
    caught(check, /says .* holds .*; it does not/, put(new SimActorRef(inMemory, "x", right.v)));
    caught(check, /expected/, put(new SimValue(inMemory, (right.v + 1) >>> 0, 8)));
  });

  test("a wanted key still pending for the client is lost", () => {
    const { sim, inMemory } = finished();
    const x = sim.checkInput();
    caught(
      () => checkOutcomes(x),
      /wanted key .* ended pending for the client/,
      () => {
        sim.client.status.set(inMemory, "pending");
        return () => sim.client.status.set(inMemory, "memory");
      },
    );
  });

  test("an erred key: erred on the scheduler too, blamed on itself or an input, with an injected error or KilledWorker after enough deaths", () => {
    const { sim, inMemory, erred } = finished();
    const x = sim.checkInput();
    const check = () => checkOutcomes(x);
    const ts = sim.scheduler.state.tasks.get(erred);
    if (ts === undefined) throw new Error("unknown to the scheduler");
    caught(check, /told .* erred; the scheduler says memory/, () => {
      ts.state = "memory";
      return () => {
        ts.state = "erred";
      };
    });
    const err = sim.client.errors.get(erred);
    if (err === undefined) throw new Error("no error");
    const blamed = (blame: string, exceptionText: string) => () => {
      sim.client.errors.set(erred, { blame, exceptionText });
      return () => sim.client.errors.set(erred, err);
    };
    // Blamed on a key it does not need, even one whose error was injected.
    const needed = new Set<number>();
    const stack = [x.index.get(erred) as number];
    while (stack.length > 0) {
      const j = stack.pop() as number;
      if (!needed.has(j)) stack.push(...sim.workload.tasks[j].deps);
      needed.add(j);
    }
    const stranger = sim.workload.tasks.findIndex((_, j) => !needed.has(j));
    expect(stranger).toBeGreaterThanOrEqual(0);
    const strangerKey = sim.workload.tasks[stranger].key;
    const strangerText = `InjectedError: ${strangerKey} failed`;
    sim.injected.set(strangerKey, new Set([strangerText]));
    caught(
      check,
      /blamed on .*, which is not one of its inputs/,
      blamed(strangerKey, strangerText),
    );
    sim.injected.delete(strangerKey);
    // KilledWorker only once the blamed task's deaths exceed allowedFailures; nothing else then.
    const deaths = sim.scheduler.deathsWhileProcessing;
    const had = deaths.get(err.blame);
    const restore = () =>
      had === undefined ? deaths.delete(err.blame) : deaths.set(err.blame, had);
    const killedWorker = `KilledWorker: ${err.blame}`;
    deaths.set(err.blame, x.allowedFailures);
    caught(check, /did not inject/, blamed(err.blame, killedWorker));
    deaths.set(err.blame, x.allowedFailures + 1);
    sim.client.errors.set(erred, { blame: err.blame, exceptionText: killedWorker });
    check();
    caught(check, /did not inject/, blamed(err.blame, "ValueError: not injected"));
    restore();
    expect(inMemory).not.toBe(erred);
  });
});

describe("checkPauses", () => {
  test("a worker paused unknown to the scheduler fails, unless cut off from it", () => {
    const { sim, holder } = finished();
    const x = sim.checkInput();
    checkPauses(x);
    holder.pause();
    expect(() => checkPauses(x)).toThrow(
      /is paused \(for memory\), but the scheduler takes it for running/,
    );
    // A worker cut off cannot tell the scheduler anything: its view is not checked.
    holder.cutOff = true;
    checkPauses(x);
  });
});

describe("checkEmpty", () => {
  test("after the release, a task left on the scheduler, or a task or value on a live worker, is a leak", () => {
    const sim = new Simulation({ seed: 1, tasks: 10, workers: 2, faults: NO_FAULTS });
    const r = sim.run();
    expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
    const x = sim.checkInput();
    checkEmpty(x);
    const w = sim.liveWorkers()[0];
    caught(
      () => checkEmpty(x),
      /still has 0 tasks and 1 value: /,
      () => {
        w.state.data.set("inc-0", new SimValue("inc-0", 1, 8));
        return () => w.state.data.delete("inc-0");
      },
    );
    // One task left on the scheduler is a leak as well as many.
    const tasks = sim.scheduler.state.tasks;
    const { sim: unreleased, inMemory } = finished();
    const ts = unreleased.scheduler.state.tasks.get(inMemory);
    if (ts === undefined) throw new Error("unknown to the scheduler");
    caught(
      () => checkEmpty(x),
      /the scheduler still has 1 task: /,
      () => {
        tasks.set(inMemory, ts);
        return () => tasks.delete(inMemory);
      },
    );
    // A dead worker's leftovers went with it.
    const dead = [...sim.workers.values()].find((v) => !v.alive) ?? w;
    dead.alive = false;
    dead.state.data.set("inc-0", new SimValue("inc-0", 1, 8));
    checkEmpty(x);
  });
});

describe("a run ends with the checks", () => {
  test("a cancelled wanted key is explained only by lost scattered data: none in this workload", () => {
    const { sim, inMemory } = finished();
    const x = sim.checkInput();
    caught(
      () => checkOutcomes(x),
      /ended cancelled .*: no scattered data in this workload/,
      () => {
        sim.client.status.set(inMemory, "cancelled");
        sim.client.cancelReasons.set(inMemory, "lost dependencies: a task it needs was lost");
        return () => {
          sim.client.status.set(inMemory, "memory");
          sim.client.cancelReasons.delete(inMemory);
        };
      },
    );
  });

  test("a wrong value is caught as a dependent reads it, though the client fires and forgets the key that needs it", () => {
    // Seed 1 fires and forgets chain-2 once it is in memory: no worker holds a
    // value by the end checks, which passed it.
    const r = simulate({
      seed: 1,
      workload: "chain",
      tasks: 3,
      faults: NO_FAULTS,
      variant: "wrong-value",
    });
    expect(r.failure?.kind).toBe("wrong-value");
    expect(r.failure?.message).toMatch(/^tcp:\S+: chain-1 read chain-0 = \d+, expected \d+$/);
  });

  test("a wrong value is caught as the client is told of it, though it is gone by the run's end", () => {
    // Seed 4 restarts the cluster after the wrong inc-1 reached the client; nothing
    // needs inc-1, and its new value is right.
    const r = simulate({ seed: 4, workload: "map", faults: NO_FAULTS, variant: "wrong-value" });
    expect(r.failure?.kind).toBe("wrong-value");
    expect(r.failure?.message).toMatch(
      /^the client \(from tcp:\S+\) read inc-1 = \d+, expected \d+$/,
    );
  });

  test("a worker's resume the scheduler never hears fails the run", () => {
    // The first worker to resume from a pause is taken for paused from then on.
    let muted: string | null = null;
    const hooks: SimHooks = {
      schedulerStimulus: (_ctx, ev) => {
        if (ev.kind !== "worker-message" || ev.msg.op !== "worker-status-change") return ev;
        if (ev.msg.status !== "running") return ev;
        muted ??= ev.worker;
        return ev.worker === muted ? null : ev;
      },
    };
    const r = simulate({ seed: 3, tasks: 20, faults: { ...NO_FAULTS, pause: 5 }, hooks });
    expect(muted).not.toBeNull();
    expect(r.failure?.kind, r.failure?.message).toBe("invalid-state");
    expect(r.failure?.message).toBe(`${muted} is running, but the scheduler takes it for paused`);
  });
});
