import { describe, expect, it } from "vitest";
import { PubSubBroker } from "./pubsub.ts";

describe("PubSubBroker", () => {
  it("sends a message to the clients subscribed to its name at the time, once each", () => {
    const sent: [string, string, unknown][] = [];
    const broker = new PubSubBroker((client, name, msg) => sent.push([client, name, msg]));
    expect(broker.put("a", 0)).toBe(0);
    broker.subscribe("a", "c1");
    broker.subscribe("a", "c2");
    broker.subscribe("a", "c1");
    broker.subscribe("b", "c1");
    expect(broker.subscriberCount("a")).toBe(2);
    expect(broker.put("a", 1)).toBe(2);
    expect(broker.put("b", 2)).toBe(1);
    expect(sent).toEqual([
      ["c1", "a", 1],
      ["c2", "a", 1],
      ["c1", "b", 2],
    ]);
    broker.unsubscribe("a", "c2");
    broker.unsubscribe("a", "nobody");
    broker.unsubscribe("nothing", "c1");
    expect(broker.put("a", 3)).toBe(1);
    broker.clientLeft("c1");
    expect(broker.subscriberCount("a")).toBe(0);
    expect(broker.subscriberCount("b")).toBe(0);
    expect(broker.put("a", 4) + broker.put("b", 5)).toBe(0);
    expect(sent).toHaveLength(4);
  });
});
