import { describe, expect, it } from "vitest";
import { actorRef } from "../protocol/actors.ts";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { MissingDependencyError, resolveArgs } from "./resolveArgs.ts";

const data = new Map<string, unknown>([
  ["a", 1],
  ["b", { v: 2 }],
]);

describe("resolveArgs", () => {
  it("replaces references at any depth in arrays and plain objects", () => {
    const args = [taskRef("a"), { x: [taskRef("b"), 3], y: "s" }, [[taskRef("a")]]];
    expect(resolveArgs(args, data, "k").args).toEqual([1, { x: [{ v: 2 }, 3], y: "s" }, [[1]]]);
  });

  it("returns the input when there is nothing to replace, and never modifies it", () => {
    const args = [1, { x: [2] }];
    expect(resolveArgs(args, data, "k").args).toBe(args);
    const withRef = [{ keep: { deep: 1 }, ref: taskRef("a") }];
    const out = resolveArgs(withRef, data, "k").args as { keep: unknown; ref: unknown }[];
    expect(withRef[0].ref).toEqual(taskRef("a"));
    expect(out[0].keep).toBe(withRef[0].keep);
  });

  it("leaves class instances and Maps alone", () => {
    const m = new Map([["r", taskRef("a")]]);
    expect(resolveArgs([m], data, "k").args[0]).toBe(m);
  });

  it("a reference to a value not held fails clearly", () => {
    expect(() => resolveArgs([taskRef("zzz")], data, "k")).toThrow(MissingDependencyError);
    expect(() => resolveArgs([taskRef("zzz")], data, "k")).toThrow(
      'task "k" refers to "zzz", which is not in memory on this worker',
    );
  });

  it("replaces a reference to an actor held here by its ActorRef, and says actors are among the arguments", () => {
    const held = { actors: new Map<string, unknown>([["act", { n: 1 }]]), address: "tcp://w:1" };
    const plain = resolveArgs([taskRef("a")], data, "k", held);
    expect(plain.hasActors).toBe(false);
    const out = resolveArgs([{ c: taskRef("act") }, taskRef("a")], data, "k", held);
    expect(out.args).toEqual([{ c: actorRef("act", "tcp://w:1") }, 1]);
    expect(out.hasActors).toBe(true);
    // Without the held actors, the reference is missing.
    expect(() => resolveArgs([taskRef("act")], data, "k")).toThrow(MissingDependencyError);
  });

  it("says actors are among the arguments when a value fetched from a peer is an ActorRef", () => {
    const fetched = new Map<string, unknown>([["remote", actorRef("remote", "tcp://w:2")]]);
    const out = resolveArgs([taskRef("remote")], fetched, "k");
    expect(out.args).toEqual([actorRef("remote", "tcp://w:2")]);
    expect(out.hasActors).toBe(true);
  });

  it("keeps the items before the first reference of an array", () => {
    const out = resolveArgs([0, "x", taskRef("a"), 3], data, "k");
    expect(out.args).toEqual([0, "x", 1, 3]);
  });

  it("resolves references in objects without a prototype", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.r = taskRef("a");
    const out = resolveArgs([bare], data, "k");
    expect(out.args[0]).toEqual({ r: 1 });
  });
});
