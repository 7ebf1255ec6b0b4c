import { afterEach, describe, expect, it } from "vitest";
import { checkMapKeys } from "./mapKeys.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("map's key, as Dask's map(key=)", () => {
  it("an array names each item's task; a string prefixes the keys map would derive", async () => {
    const { client } = await testCluster();
    const named = client.map(inc, [1, 2], { key: ["one", "two"] });
    expect(named.map((f) => f.key)).toEqual(["one", "two"]);
    expect(await client.gather(named)).toEqual([2, 3]);

    const derived = client.map(inc, [1, 2]);
    const prefixed = client.map(inc, [1, 2], { key: "step" });
    expect(prefixed.map((f) => f.key)).toEqual(
      derived.map((f) => `step-${f.key.slice("inc-".length)}`),
    );
    expect(await client.gather(prefixed)).toEqual([2, 3]);

    // Impure: a fresh key each, under the prefix.
    const fresh = client.map(inc, [1, 1], { key: "again", pure: false });
    expect(fresh[0].key).toMatch(/^again-client-/);
    expect(fresh[1].key).not.toBe(fresh[0].key);
    expect(await client.gather(fresh)).toEqual([2, 2]);
    // null, as Dask's None: the keys map derives.
    expect(client.map(inc, [1], { key: null })[0].key).toBe(derived[0].key);
  });

  it("refuses keys that do not name each item once", () => {
    expect(() => checkMapKeys(["a"], 2)).toThrow(
      "map: key gives 1 keys for 2 items (one per item)",
    );
    expect(() => checkMapKeys(["a", "a"], 2)).toThrow('map: key[1] "a" is given twice');
    expect(() => checkMapKeys(["a", 5], 2)).toThrow(
      "map: key[1] must be a non-empty string, got 5",
    );
    expect(() => checkMapKeys("", 1)).toThrow("map: key must not be empty");
    expect(() => checkMapKeys(5, 1)).toThrow(
      "map: key must be a string (the prefix of every item's key) or an array of keys, one per item, got 5",
    );
    expect(() => checkMapKeys(["__proto__"], 1)).toThrow(/map: key\[0\] "__proto__" is __proto__/);
  });
});
