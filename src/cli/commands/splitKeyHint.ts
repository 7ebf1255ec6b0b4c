/**
 * The hint `weft run` adds when `--keys` cut a key of the graph at its commas. Dask's
 * keys are often tuples, `('x', 0)`, and `--keys "('x', 0)"` asked for the keys `('x'`
 * and `0)`: the error named `('x'` alone, and left the user to find `--key`.
 */

import type { Graph } from "../../client/graph.ts";

/**
 * ` (…: --key "K")` for each key K of `graph` holding a comma that the `--keys` list
 * `keysOption` holds whole, so cut into pieces; "" when it holds none.
 */
export function splitKeyHint(keysOption: string | undefined, graph: Graph): string {
  if (keysOption === undefined || !keysOption.includes(",")) return "";
  const keys = graph instanceof Map ? [...graph.keys()] : Object.keys(graph);
  const cut = keys.filter((k) => k.includes(",") && keysOption.includes(k));
  if (cut.length === 0) return "";
  const named = cut
    .slice(0, 3)
    .map((k) => `--key ${JSON.stringify(k)}`)
    .join(" ");
  return ` (--keys splits its list at commas, cutting the graph's ${cut.length === 1 ? "key" : "keys"} ${cut
    .slice(0, 3)
    .map((k) => JSON.stringify(k))
    .join(
      ", ",
    )}${cut.length > 3 ? ", …" : ""}: name ${cut.length === 1 ? "it" : "each"} with ${named}${cut.length > 3 ? " …" : ""})`;
}
