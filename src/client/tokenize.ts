/** Deterministic keys for submitted tasks, as Dask's `tokenize` (pure functions). */

import * as crypto from "node:crypto";
import { messageSegments } from "../comm/messageLayout.ts";
import { type EncodedMessage, encodeMessage } from "../comm/wireCodec.ts";

/**
 * `name-<hash>`: the same function and arguments give the same key, so
 * submitting them twice computes them once. Throws a TypeError if the
 * arguments cannot be encoded, naming `call`, the client's method the user called
 * (the arguments' checks, which name it too, leave little that can fail here).
 */
export function tokenize(
  name: string,
  args: readonly unknown[],
  call: "submit" | "submitWith" | "map" = "submit",
): string {
  const scalars = scalarText(name, args);
  if (scalars !== null) return `${name}-${sha1Hex32(scalars)}`;
  let encoded: EncodedMessage;
  try {
    encoded = encodeMessage([name, args]);
  } catch (err) {
    throw new TypeError(
      `${call}(${name}): the arguments cannot be sent: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (encoded.buffers.length === 0) return `${name}-${sha1Hex32(encoded.payload)}`;
  // Large byte arrays are out-of-band buffers (views of the arguments, not
  // copies): the message's bytes as TCP lays them out, hashed piece by piece.
  const hash = crypto.createHash("sha1");
  for (const piece of messageSegments(encoded)) hash.update(piece);
  return `${name}-${hash.digest("hex").slice(0, 32)}`;
}

/** The first 32 hex digits of the SHA-1 of `data`. */
const sha1Hex32: (data: string | Uint8Array) => string =
  // `crypto.hash` (Node 20.12+) hashes in one call, without a Hash object.
  typeof crypto.hash === "function"
    ? (data) => crypto.hash("sha1", data, "hex").slice(0, 32)
    : (data) => crypto.createHash("sha1").update(data).digest("hex").slice(0, 32);

/**
 * An unambiguous text of `name` and `args` when every argument is a number,
 * string, boolean, bigint, null or undefined (`client.map` over a range, the
 * common case), else null. Hashing it spares encoding the arguments. Strings
 * carry their length, so no two argument lists give the same text; the text
 * starts with "s", never with the byte 0x92 that begins every encoding of
 * `[name, args]` nor with the zero byte that begins its TCP layout, so it
 * cannot equal one either.
 */
function scalarText(name: string, args: readonly unknown[]): string | null {
  let text = `scalars ${name.length}:${name}`;
  for (let i = 0; i < args.length; i++) {
    const v = args[i];
    switch (typeof v) {
      case "number":
        text += Object.is(v, -0) ? " n-0" : ` n${v}`;
        break;
      case "string":
        // Hashing converts the text to UTF-8, where a lone surrogate becomes U+FFFD:
        // such a string is written as its UTF-16 code units instead.
        text += v.isWellFormed() ? ` s${v.length}:${v}` : ` u${codeUnits(v)}`;
        break;
      case "boolean":
        text += v ? " T" : " F";
        break;
      case "bigint":
        text += ` b${v}`;
        break;
      case "undefined":
        text += " U";
        break;
      default:
        if (v !== null) return null;
        text += " N";
    }
  }
  return text;
}

/** The UTF-16 code units of `s` in hex, 4 digits each. */
function codeUnits(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) out += s.charCodeAt(i).toString(16).padStart(4, "0");
  return out;
}
