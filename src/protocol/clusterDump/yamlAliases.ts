/**
 * How many values a YAML document's aliases make of it. Each alias stands for
 * a copy of its anchor's value wherever the dump is walked, so a few hundred
 * bytes of anchors, each aliased ten times by the next, stand for 10^8 values
 * (an "alias bomb"): counted on the syntax tree first, where each anchored
 * node is counted once, such a document is refused before it is expanded.
 */

import { type Document, isAlias, isMap, isPair, isScalar, isSeq, type Node, visit } from "yaml";

/**
 * The values `doc` stands for once its aliases are expanded (a scalar, a
 * collection and a mapping's key each count one), or `limit + 1` as soon as
 * the count passes `limit`.
 */
export function expandedValueCount(doc: Document.Parsed, limit: number): number {
  // An alias refers to the last node anchored with its name before it.
  const targets = new Map<Node, Node | undefined>();
  const anchors = new Map<string, Node>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) targets.set(node, anchors.get(node.source));
      else if (node.anchor !== undefined) anchors.set(node.anchor, node);
    },
  });
  const counted = new Map<Node, number>();
  const over = limit + 1;
  const count = (node: unknown): number => {
    if (isAlias(node)) {
      const target = targets.get(node);
      return target === undefined ? 1 : count(target);
    }
    if (isScalar(node) || !(isMap(node) || isSeq(node))) return 1;
    const known = counted.get(node);
    if (known !== undefined) return known;
    // An alias inside its own anchor's value (a cycle) counts one.
    counted.set(node, 1);
    let n = 1;
    for (const item of node.items) {
      n += isPair(item) ? count(item.key) + count(item.value) : count(item);
      if (n > limit) {
        n = over;
        break;
      }
    }
    counted.set(node, n);
    return n;
  };
  return Math.min(count(doc.contents), over);
}
