/**
 * YAML that PyYAML reads back as it was written: dumps are read with PyYAML's
 * YAML 1.1 resolver (pyyamlScalars.ts), as Dask's YAML dumps are. The `yaml`
 * package writes YAML 1.2 by default, where `on`, `yes`, `1_000` or `12:30`
 * need no quotes, and 1.1 reads them as booleans and numbers; written as 1.1,
 * they are quoted. Floats in exponent form are the other gap: the package
 * writes `5e-7`, which 1.1 reads as a string (its floats have a `.` and a
 * signed exponent), so those are written `!!float 5.0e-7`.
 */

import { Document, visit } from "yaml";

const FLOAT = "tag:yaml.org,2002:float";

/** Writes a float in exponent form as YAML 1.1 reads it: `5.0e-7`, `1.0e+21`. */
const exponentFloat = {
  identify: () => false,
  default: true,
  tag: FLOAT,
  test: /^[-+]?[0-9][0-9_]*\.[0-9_]*[eE][-+][0-9]+$/,
  resolve: (text: string) => Number(text.replaceAll("_", "")),
  stringify: (item: { value: unknown }) => {
    const [mantissa, exponent] = (item.value as number).toExponential().split("e");
    return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}e${exponent}`;
  },
};

/** `value` as YAML that PyYAML's resolver reads back unchanged. */
export function stringifyForPyYaml(value: unknown): string {
  const doc = new Document(value, {
    version: "1.1",
    aliasDuplicateObjects: false,
    customTags: (tags) => [exponentFloat, ...tags],
  });
  visit(doc, {
    Scalar(_key, node) {
      const v = node.value;
      if (typeof v === "number" && Number.isFinite(v) && /e/.test(String(v))) node.tag = FLOAT;
    },
  });
  return doc.toString();
}
