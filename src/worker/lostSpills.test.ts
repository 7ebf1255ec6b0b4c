import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOST_INPUT_HELD_MS, LOST_INPUT_RETRY_MS, LostSpills } from "./lostSpills.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import { SpillStore } from "./spillStore.ts";
import { PauseEvent, RescheduleEvent, type StateMachineEvent } from "./state/events.ts";
import type { Instruction } from "./state/instructions.ts";
import { compute, free, newWs, secede, success, W2, W3 } from "./state/testing.ts";

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weft-lost-spills-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A state machine over a spilling store holding `x` (on disk, its file removed)
 * and running the tasks `running`, which need it, and with `queued` (also
 * needing it) waiting for the one resource `R` that each of them holds; the
 * LostSpills under test, and the messages the state machine sent.
 */
function lostWith(running: string[], queued: string[] = []) {
  const data = new SpillStore({
    targetBytes: 10,
    directory: dir,
    sizeof: (v) => (v instanceof Uint8Array ? v.byteLength : 1),
  });
  const nthreads = running.length + queued.length + 1;
  const ws = newWs({ nthreads, data, ...(queued.length > 0 ? { resources: { R: 1 } } : {}) });
  ws.handleStimulus(compute("x", "c-x"));
  ws.handleStimulus(success("x", "s-x", new Uint8Array(100)));
  const needsR = queued.length > 0 ? { resourceRestrictions: { R: 1 } } : {};
  for (const key of [...running, ...queued]) {
    ws.handleStimulus(compute(key, `c-${key}`, { whoHas: { x: [W2] }, ...needsR }));
  }
  for (const key of running) expect(ws.task(key).state).toBe("executing");
  for (const key of queued) expect(ws.task(key).state).toBe("constrained");
  for (const d of readdirSync(dir)) rmSync(join(dir, d), { recursive: true });
  let err: unknown;
  try {
    data.get("x");
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(SpilledValueLostError);
  const sent: Instruction[] = [];
  const rescheduled: string[] = [];
  const lost = new LostSpills({
    state: ws,
    logger: pino({ level: "silent" }),
    isLost: (key) => data.isLost(key),
    handleStimulus: (...stims: StateMachineEvent[]) => {
      sent.push(...ws.handleStimuli(stims));
    },
    reschedule: (keys) => {
      rescheduled.push(...keys);
    },
  });
  const feed = (ev: StateMachineEvent) => {
    sent.push(...ws.handleStimuli([ev]));
    lost.release();
  };
  return { ws, data, lost, err: err as SpilledValueLostError, sent, rescheduled, feed };
}

const released = (sent: Instruction[]) =>
  sent.filter((i) => (i as { op?: string }).op === "release-worker-data");

describe("LostSpills", () => {
  it("drops a lost key once the task that found it is rescheduled", async () => {
    const { ws, lost, err, sent, feed } = lostWith(["y"]);
    // Nothing else needs it: y is rescheduled at once.
    expect(lost.inputLost(err, "y")).toBe(0);
    await Promise.resolve();
    // Not while y runs: the state machine refuses to drop an input of a running task.
    expect(ws.task("x").state).toBe("memory");
    expect(lost.keys).toEqual(new Set(["x"]));
    feed(RescheduleEvent.dummy("y", { stimulusId: "spilled-input-lost" }));
    expect(ws.tasks.get("x")?.state ?? "forgotten").not.toBe("memory");
    expect(released(sent)).toMatchObject([{ key: "x" }]);
    expect(lost.keys.size).toBe(0);
    // The story says why.
    expect(JSON.stringify(ws.story("x"))).toContain("spilled-value-lost");
  });

  it("makes a task wait while another running one holds the input, and drops it after both", () => {
    const { ws, data, lost, err, sent, feed } = lostWith(["y", "z"]);
    expect(lost.inputLost(err, "y")).toBe(LOST_INPUT_RETRY_MS);
    feed(RescheduleEvent.dummy("y", { stimulusId: "spilled-input-lost" }));
    expect(ws.task("x").state).toBe("memory");
    expect(released(sent)).toEqual([]);
    feed(success("z", "s-z", 1));
    expect(released(sent)).toMatchObject([{ key: "x" }]);
    expect(data.isLost("x")).toBe(false);
    expect(data.has("x")).toBe(false);
  });

  it("reschedules at once a task whose input another waits for a resource to read, which then runs", () => {
    // Waiting for the others queued for R, each sent straight back by the scheduler,
    // the tasks taking turns at R never let the input drop.
    const { ws, lost, err, sent, feed } = lostWith(["y"], ["z"]);
    expect(lost.inputLost(err, "y")).toBe(0);
    feed(RescheduleEvent.dummy("y", { stimulusId: "spilled-input-lost" }));
    expect(ws.task("z").state).toBe("executing");
    expect(released(sent)).toEqual([]);
    expect(lost.inputLost(err, "z")).toBe(0);
    feed(RescheduleEvent.dummy("z", { stimulusId: "spilled-input-lost" }));
    expect(released(sent)).toMatchObject([{ key: "x" }]);
  });

  it("holds no task up for one only waiting out the loss, and ends that wait once none holds it", async () => {
    const { lost, err, sent, feed } = lostWith(["y", "z"]);
    // z finds it lost while y may hold it: z waits.
    const zWaits = lost.waitOut(err, "z");
    expect(zWaits).not.toBeNull();
    let zDone = false;
    void zWaits?.then(() => {
      zDone = true;
    });
    // y then finds it lost too: z holds nothing, so y is rescheduled at once (waiting for
    // each other, the two kept the input from being dropped for good).
    expect(lost.waitOut(err, "y")).toBeNull();
    feed(RescheduleEvent.dummy("y", { stimulusId: "spilled-input-lost" }));
    await Promise.resolve();
    // No task here holds it now: z's wait ends at once, not LOST_INPUT_RETRY_MS later.
    expect(zDone).toBe(true);
    feed(RescheduleEvent.dummy("z", { stimulusId: "spilled-input-lost" }));
    expect(released(sent)).toMatchObject([{ key: "x" }]);
  });

  it("has a paused worker ask for the tasks waiting here for the input to run elsewhere, once", async () => {
    // Paused, the worker starts none of them, nor fetches w's other input: without the
    // scheduler taking them back, they kept the key until it resumed, peers meanwhile
    // sent here to fetch it in vain.
    const { ws, lost, err, sent, rescheduled, feed } = lostWith(["r"]);
    feed(new PauseEvent({ stimulusId: "pause" }));
    feed(success("r", "s-r", 1)); // r, running before the pause, ends
    feed(compute("y", "c-y", { whoHas: { x: [W2] } }));
    feed(compute("w", "c-w", { whoHas: { x: [W2], o: [W3] } }));
    expect([ws.task("y").state, ws.task("w").state]).toEqual(["ready", "waiting"]);
    lost.lost(err);
    await Promise.resolve();
    expect(rescheduled.sort()).toEqual(["w", "y"]);
    expect(ws.task("x").state).toBe("memory");
    // Asked once, however many batches of stimuli follow.
    feed(new PauseEvent({ stimulusId: "pause-again" }));
    lost.lost(err);
    await Promise.resolve();
    expect(rescheduled).toHaveLength(2);
    // The scheduler frees them here: the key drops.
    feed(free(["y", "w"], "free"));
    expect(released(sent)).toMatchObject([{ key: "x" }]);
    expect(lost.keys.size).toBe(0);
  });

  it("has a running worker ask the scheduler for nothing: its tasks find the input lost themselves", async () => {
    const { ws, lost, err, rescheduled, feed } = lostWith(["r"]);
    feed(compute("w", "c-w", { whoHas: { x: [W2], o: [W3] } }));
    expect(ws.task("w").state).toBe("waiting");
    lost.lost(err);
    await Promise.resolve();
    expect(rescheduled).toEqual([]);
    expect(ws.task("x").state).toBe("memory");
  });

  it("drops a key nothing here needs right away, once, however often it is found lost", async () => {
    const { ws, lost, err, sent } = lostWith([]);
    lost.lost(err);
    lost.lost(err);
    await Promise.resolve();
    expect(ws.tasks.get("x")?.state ?? "forgotten").not.toBe("memory");
    expect(released(sent)).toHaveLength(1);
  });

  it("forgets a lost key set anew or freed meanwhile, without dropping it", async () => {
    const { ws, data, lost, err, sent, feed } = lostWith(["y"]);
    lost.inputLost(err, "y");
    data.set("x", new Uint8Array(5)); // taken anew (a scatter, say)
    feed(RescheduleEvent.dummy("y", { stimulusId: "r" }));
    expect(ws.task("x").state).toBe("memory");
    expect(released(sent)).toEqual([]);
    expect(lost.keys.size).toBe(0);
  });
});

describe("LostSpills, the input held by tasks that may wait for the one finding it lost", () => {
  /**
   * {@link lostWith}'s, with `holders` running too, and a LostSpills whose clock the
   * test moves (`clock.ms`) and whose tasks holding a client are `clients`.
   */
  function heldBy(holders: string[], heldMs?: number) {
    const made = lostWith(["d", ...holders]);
    const clock = { ms: 1_000 };
    const clients = new Set<string>();
    const lost = new LostSpills({
      state: made.ws,
      logger: pino({ level: "silent" }),
      isLost: (key) => made.data.isLost(key),
      handleStimulus: (...stims: StateMachineEvent[]) => void made.ws.handleStimuli(stims),
      reschedule: () => {},
      holdsClient: (key) => clients.has(key),
      now: () => clock.ms,
      heldMs,
    });
    return { ...made, lost, clock, clients };
  }

  it("errs the task once a seceded holder has held the input for LOST_INPUT_HELD_MS", () => {
    // h may await d's future: rescheduled for good, d kept h, and so the input, from ending.
    const { ws, lost, err, clock } = heldBy(["h"]);
    ws.handleStimulus(secede("h", "secede-h"));
    expect(ws.task("h").state).toBe("long-running");
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += LOST_INPUT_HELD_MS - 1;
    expect(lost.fails(err, "d")).toBe(false);
    expect(lost.verdict(err, "d")).not.toBe("fail");
    clock.ms += 1;
    expect(lost.fails(err, "d")).toBe(true);
    expect(lost.verdict(err, "d")).toBe("fail");
  });

  it("errs the task after the worker's lostInputHeldMs instead, when given", () => {
    const { ws, lost, err, clock } = heldBy(["h"], 300);
    ws.handleStimulus(secede("h", "secede-h"));
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += 299;
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += 1;
    expect(lost.fails(err, "d")).toBe(true);
  });

  it("errs it only while every holder may wait: one holding a client, not one merely running", () => {
    const { lost, err, clock, clients } = heldBy(["h", "r"]);
    clients.add("h");
    // r, running without a client, ends on its own: d is only delayed, however long.
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += 10 * LOST_INPUT_HELD_MS;
    expect(lost.fails(err, "d")).toBe(false);
    // Counted from when r, too, may wait (it asked for a client).
    clients.add("r");
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += LOST_INPUT_HELD_MS;
    expect(lost.fails(err, "d")).toBe(true);
  });

  it("never errs a task whose input no other task here holds", () => {
    const { lost, err, clock } = heldBy([]);
    expect(lost.fails(err, "d")).toBe(false);
    clock.ms += 10 * LOST_INPUT_HELD_MS;
    expect(lost.fails(err, "d")).toBe(false);
    expect(lost.verdict(err, "d")).toBeNull();
  });

  it("fails a peer's fetch once only such tasks have held the input for LOST_INPUT_HELD_MS", () => {
    // A task on the peer needs it: answered without it, the peer came back for good.
    const { ws, lost, err, clock, feed } = heldBy(["h"]);
    feed(RescheduleEvent.dummy("d", { stimulusId: "spilled-input-lost" }));
    ws.handleStimulus(secede("h", "secede-h"));
    expect(lost.failsPeer(err)).toBe(false);
    clock.ms += LOST_INPUT_HELD_MS;
    expect(lost.failsPeer(err)).toBe(true);
    // Once h ended, nothing holds it: it drops, and the peer is answered without it.
    feed(success("h", "s-h", 1));
    expect(lost.failsPeer(err)).toBe(false);
  });
});
