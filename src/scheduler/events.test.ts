import { expect, it } from "vitest";
import { EventBroker, type LoggedEvent } from "./events.ts";

function broker(maxlen: number): { b: EventBroker; sent: [string, string, LoggedEvent][] } {
  const sent: [string, string, LoggedEvent][] = [];
  return { b: new EventBroker(maxlen, (c, t, e) => sent.push([c, t, e])), sent };
}

it("keeps the last maxlen events of each topic and sends each to the topic's subscribers", () => {
  const { b, sent } = broker(2);
  b.subscribe("a", "c1");
  b.subscribe("b", "c2");
  b.log(["a", "b"], "x", 1);
  b.log(["a"], "y", 2);
  b.log(["a"], "z", 3);
  expect(b.get("a")).toEqual([
    [2, "y"],
    [3, "z"],
  ]);
  expect(b.get("b")).toEqual([[1, "x"]]);
  expect(b.get("none")).toEqual([]);
  expect(sent).toEqual([
    ["c1", "a", [1, "x"]],
    ["c2", "b", [1, "x"]],
    ["c1", "a", [2, "y"]],
    ["c1", "a", [3, "z"]],
  ]);
  expect(Object.keys(b.all())).toEqual(["a", "b"]);
  b.unsubscribe("a", "c1");
  b.clientLeft("c2");
  b.log(["a", "b"], "w", 4);
  expect(sent).toHaveLength(4);
});

it("with maxlen 0 it keeps nothing, and still sends", () => {
  const { b, sent } = broker(0);
  b.subscribe("a", "c1");
  b.log(["a"], "x", 1);
  expect(b.get("a")).toEqual([]);
  expect(sent).toHaveLength(1);
});

it("drops a topic only subscribed to, never logged to, with its last subscriber", () => {
  const { b } = broker(10);
  for (let i = 0; i < 100; i++) {
    b.subscribe(`t${i}`, "c1");
    b.unsubscribe(`t${i}`, "c1");
  }
  b.subscribe("kept", "c1");
  b.subscribe("kept", "c2");
  b.subscribe("left", "c2");
  b.clientLeft("c2");
  b.log(["logged"], "x", 1);
  b.subscribe("logged", "c3");
  b.unsubscribe("logged", "c3");
  // Before, every topic ever subscribed to stayed; one with events stays, as in Dask.
  expect(b.topicCount).toBe(2); // "kept" and "logged"
  expect(Object.keys(b.all())).toEqual(["logged"]);
});

it("lists in all() only the topics logged to, not those only subscribed to, as Dask's get_events does", () => {
  const { b } = broker(2);
  b.subscribe("print", "c1");
  b.log(["a"], "x", 1);
  expect(b.all()).toEqual({ a: [[1, "x"]] });
  b.log(["print"], "y", 2);
  expect(Object.keys(b.all())).toEqual(["print", "a"]);
});
