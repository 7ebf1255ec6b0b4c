import { sizeof, typeName } from "../../util/sizeof.ts";
import { isDict } from "./fields.ts";

/**
 * A task value as a recording keeps it: its Python type name, its size, and the value
 * itself when JSON could hold it. The state machine never looks inside a value; it
 * only needs these two facts.
 */
export class RecordedValue {
  constructor(
    readonly typename: string,
    readonly sizeof: number,
    readonly value: unknown,
    readonly repr: string | null = null,
  ) {}

  /** Decode `{"typename", "sizeof", "value"|"repr"}`; anything else is kept as an opaque value. */
  static fromDict(v: unknown): unknown {
    if (isDict(v) && typeof v.typename === "string" && typeof v.sizeof === "number") {
      return new RecordedValue(
        v.typename,
        v.sizeof,
        v.value ?? null,
        typeof v.repr === "string" ? v.repr : null,
      );
    }
    return v;
  }
}

/** `sizeof` that reads a RecordedValue's recorded size. */
export function recordedSizeof(v: unknown): number {
  return v instanceof RecordedValue ? v.sizeof : sizeof(v);
}

/** `typeName` that reads a RecordedValue's recorded type name. */
export function recordedTypeName(v: unknown): string {
  return v instanceof RecordedValue ? v.typename : typeName(v);
}

/** A value in the recorded form. */
export function encodeValue(v: unknown): unknown {
  if (v instanceof RecordedValue) {
    return v.repr !== null
      ? { typename: v.typename, sizeof: v.sizeof, repr: v.repr }
      : { typename: v.typename, sizeof: v.sizeof, value: v.value };
  }
  if (v === null || v === undefined) return null;
  try {
    return { typename: typeName(v), sizeof: sizeof(v), value: JSON.parse(JSON.stringify(v)) };
  } catch {
    return { typename: typeName(v), sizeof: sizeof(v), repr: String(v) };
  }
}
