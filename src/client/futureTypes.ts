/**
 * The types that map futures to the values they stand for: what a task's
 * arguments may be (`FutureOr`, `FutureArgs`), what it gives (`TaskResult`),
 * and what `gather` makes of futures in arrays and objects (`Gathered`). Apart
 * from the client: they are the vocabulary of its signatures, no part of its
 * workings.
 */

import type { TaskFunction } from "../worker/taskRegistry.ts";
import type { Future } from "./future.ts";

/**
 * An argument of a task function, or a future of one; inside arrays and
 * plain objects, any element may be a future too.
 */
export type FutureOr<T> =
  | T
  | Future<T>
  | (T extends readonly (infer E)[] ? readonly FutureOr<E>[] : never)
  // Any object type, interfaces included (they are not `Record<string, unknown>`).
  | (T extends object
      ? T extends ((...args: never[]) => unknown) | readonly unknown[]
        ? never
        : { readonly [K in keyof T]: FutureOr<T[K]> }
      : never);

/** The arguments of `F`, each possibly a future. */
export type FutureArgs<P extends readonly unknown[]> = { [K in keyof P]: FutureOr<P[K]> };

/** The result type of a task function. */
export type TaskResult<F extends TaskFunction> = Awaited<ReturnType<F>>;

/** Values of the futures in `T` (an array or a record of futures). */
export type Gathered<T> = { [K in keyof T]: GatheredValue<T[K]> };

/**
 * Objects `gather` does not search for futures (a `Map` or `Set` holding one is
 * refused at run time): they stand for themselves.
 */
export type NotSearched =
  | ReadonlyMap<unknown, unknown>
  | ReadonlySet<unknown>
  | Date
  | RegExp
  | Error
  | ArrayBufferLike
  | ArrayBufferView
  | ((...args: never[]) => unknown);

/**
 * One value of {@link Gathered}: a future's result, a container's gathered, else
 * itself. Any other object type is taken for a plain object, interfaces included
 * (they are not `Record<string, unknown>`).
 */
export type GatheredValue<X> =
  X extends Future<infer V>
    ? V
    : X extends readonly unknown[]
      ? Gathered<X>
      : X extends NotSearched
        ? X
        : X extends object
          ? Gathered<X>
          : X;
