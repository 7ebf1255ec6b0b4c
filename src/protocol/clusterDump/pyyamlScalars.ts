/** How PyYAML types plain YAML scalars, for reading the `.yaml` dumps it wrote. */

import type { ScalarTag } from "yaml";

/** Applies a leading sign of a PyYAML number literal. */
function splitSign(text: string): [sign: 1 | -1, digits: string] {
  if (text.startsWith("-")) return [-1, text.slice(1)];
  if (text.startsWith("+")) return [1, text.slice(1)];
  return [1, text];
}

/**
 * The implicit scalar types of PyYAML's `Resolver` (with its constructors),
 * which PyYAML's dumper relies on: it quotes every string that would read as
 * one of them, and only those. They differ from YAML 1.1 as the `yaml`
 * package implements it: PyYAML reads `y`, `n`, `1e3` as strings. Its
 * timestamps are left out: a plain date stays text (PyYAML quotes a string that
 * looks like one, and a dump holds no date objects, only their reprs).
 */
export const PYYAML_SCALARS: ScalarTag[] = [
  {
    tag: "tag:yaml.org,2002:null",
    default: true,
    test: /^(?:~|null|Null|NULL)?$/,
    resolve: () => null,
  },
  {
    tag: "tag:yaml.org,2002:bool",
    default: true,
    test: /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
    resolve: (s) => /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(s),
  },
  {
    tag: "tag:yaml.org,2002:int",
    default: true,
    test: /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
    resolve: (s, onError) => {
      const [sign, v] = splitSign(s.replaceAll("_", ""));
      try {
        let n: bigint;
        if (v.includes(":")) n = v.split(":").reduce((acc, part) => acc * 60n + BigInt(part), 0n);
        else if (v.startsWith("0b") || v.startsWith("0x") || v === "0") n = BigInt(v);
        else if (v.startsWith("0")) n = BigInt(`0o${v.slice(1)}`);
        else n = BigInt(v);
        return sign < 0 ? -n : n;
      } catch {
        onError(`invalid integer ${JSON.stringify(s)}`);
        return s;
      }
    },
  },
  {
    tag: "tag:yaml.org,2002:float",
    default: true,
    test: /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
    resolve: (s) => {
      const [sign, v] = splitSign(s.replaceAll("_", "").toLowerCase());
      if (v === ".inf") return sign * Number.POSITIVE_INFINITY;
      if (v === ".nan") return Number.NaN;
      if (v.includes(":"))
        return sign * v.split(":").reduce((acc, part) => acc * 60 + Number(part), 0);
      return sign * Number(v);
    },
  },
];
