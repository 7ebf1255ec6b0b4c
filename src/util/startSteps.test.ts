import { describe, expect, it } from "vitest";
import { StartSteps } from "./startSteps.ts";

const MESSAGE = "the server was closed while starting";

function steps(failed: unknown[] = []): StartSteps {
  return new StartSteps(MESSAGE, (err) => failed.push(err));
}

describe("StartSteps", () => {
  it("not stopped: a step's value or error, as it settles", async () => {
    const s = steps();
    expect(await s.step(() => 7)).toBe(7);
    expect(await s.step(async () => "x")).toBe("x");
    await expect(
      s.step(() => {
        throw new Error("boom");
      }),
    ).rejects.toThrow(/^boom$/);
    await expect(s.step(() => Promise.reject(new Error("later")))).rejects.toThrow(/^later$/);
    expect(s.isStopped).toBe(false);
  });

  it("a stop aborts its signal, with the message, for what a step left running (a connect try)", async () => {
    const s = steps();
    const reasons: unknown[] = [];
    s.signal.addEventListener("abort", () => reasons.push(s.signal.reason));
    expect(s.signal.aborted).toBe(false);
    s.stop();
    s.stop();
    expect(reasons).toHaveLength(1);
    expect((reasons[0] as Error).message).toBe(MESSAGE);
  });

  it("a stop ends a step that never settles at once, and later steps are not run", async () => {
    const s = steps();
    const stuck = s.step(() => new Promise(() => {}));
    let outcome: unknown = null;
    void stuck.catch((err: Error) => {
      outcome = err.message;
    });
    await new Promise((r) => setImmediate(r));
    expect(outcome).toBeNull();
    s.stop();
    await expect(stuck).rejects.toThrow(new RegExp(`^${MESSAGE}$`));
    let ran = false;
    await expect(
      s.step(() => {
        ran = true;
      }),
    ).rejects.toThrow(MESSAGE);
    expect(ran).toBe(false);
  });

  it("what a step makes after the stop is undone, an undo's failure told, a late error dropped", async () => {
    const failed: unknown[] = [];
    const s = steps(failed);
    const undone: string[] = [];
    let finish: (v: string) => void = () => {};
    const late = s.step(
      () => new Promise<string>((r) => (finish = r)),
      (v) => undone.push(v),
    );
    let fail: (err: Error) => void = () => {};
    const failing = s.step(
      () => new Promise<string>((_, reject) => (fail = reject)),
      (v) => undone.push(`failing ${v}`),
    );
    let finishThrowing: (v: string) => void = () => {};
    const throwing = s.step(
      () => new Promise<string>((r) => (finishThrowing = r)),
      () => {
        throw new Error("cannot undo");
      },
    );
    s.stop();
    await expect(late).rejects.toThrow(MESSAGE);
    await expect(failing).rejects.toThrow(MESSAGE);
    await expect(throwing).rejects.toThrow(MESSAGE);
    expect(undone).toEqual([]);
    finish("listener");
    fail(new Error("comm closed"));
    finishThrowing("plugin");
    await new Promise((r) => setImmediate(r));
    expect(undone).toEqual(["listener"]);
    expect(failed).toEqual([new Error("cannot undo")]);
  });

  it("a step that settled as the stop came is stopped all the same, its value undone", async () => {
    const s = steps();
    const undone: number[] = [];
    const done = s.step(
      () => Promise.resolve(1),
      (v) => undone.push(v),
    );
    s.stop();
    await expect(done).rejects.toThrow(MESSAGE);
    await new Promise((r) => setImmediate(r));
    expect(undone).toEqual([1]);
  });
});
