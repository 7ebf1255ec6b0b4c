/**
 * Preload modules (Dask's `--preload`): modules a scheduler or worker imports as
 * it starts, whose `weftSetup(server)` export, if any, it calls then (and
 * awaits), and whose `weftTeardown(server)` it calls as it closes: to add
 * plugins, start a side service, or configure the process.
 */

import { asError } from "./asError.ts";
import { CloseBudget, closeEachWithin, DEFAULT_CLOSE_TIMEOUT_S } from "./closeBudget.ts";
import { importModule } from "./importModule.ts";
import { existingModuleUrl, fileModuleUrl } from "./moduleUrl.ts";

/** A preload module given as a path or file URL, as a file URL; throws naming `what` otherwise. */
export function preloadUrl(given: string | URL, what: string): string {
  return existingModuleUrl(fileModuleUrl(given, what), what);
}

/**
 * What closing undoes: the `weftTeardown` of each module that has one, last
 * first, each awaited until `budget`'s deadline at most (default: no deadline).
 */
export type PreloadTeardown = (budget?: CloseBudget) => Promise<void>;

/** What {@link preloadLogging} logs to (a pino logger, say). */
export interface PreloadLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * The `onTeardownError` and `onTeardownUnfinished` of {@link startPreloads}
 * that a scheduler or worker gives: each logged to `logger`, naming the module.
 */
export function preloadLogging(
  logger: PreloadLogger,
): [(url: string, err: Error) => void, (url: string) => void] {
  return [
    (url, err) => logger.error({ err, preload: url }, "a preload module's weftTeardown failed"),
    (url) =>
      logger.warn(
        { preload: url },
        "a preload module's weftTeardown did not finish within the close's timeout: no longer waited on",
      ),
  ];
}

/** Preload modules being set up ({@link startPreloads}). */
export interface PreloadsStarting {
  /**
   * Undoes the modules imported so far, one whose `weftSetup` still runs
   * included (as a plugin still starting is closed); once called, no further
   * module is imported or set up, and {@link setUp} rejects.
   */
  readonly teardown: PreloadTeardown;
  /** Resolves once every module is set up. */
  readonly setUp: Promise<void>;
}

/**
 * What a start does once the preload `url` failed with `err`, while it tears
 * the modules down: said by a start that times out meanwhile, in place of the
 * weftSetup it no longer runs.
 */
export function preloadFailed(url: string, err: Error): string {
  return `tearing down its preload modules, preload ${url} having failed: ${err.message.split("\n")[0]}`;
}

/**
 * Import each of `urls` in order and await its `weftSetup(server)`. The
 * teardown is handed over at once, with the setup: a server closed while a
 * `weftSetup` never settles still tears down the modules imported, rather
 * than waiting for a teardown that would never come. The setup rejects,
 * naming the module, if one does not import, `weftSetup` throws, or an export
 * of that name is not a function, after tearing down those set up (waiting on
 * them {@link DEFAULT_CLOSE_TIMEOUT_S} at most). The teardown undoes those
 * imported: a `weftTeardown` still running at the budget's deadline is told
 * to `onTeardownUnfinished` and no longer waited on (the others are still
 * called, in order; an error it throws later still goes to `onTeardownError`).
 * A module that fails is told to `onSetupFailed` before that teardown, which
 * may take long: a start bounded meanwhile says why it still runs.
 */
export function startPreloads<S>(
  urls: readonly string[],
  server: S,
  onTeardownError: (url: string, err: Error) => void,
  onTeardownUnfinished: (url: string) => void = () => {},
  onSetupFailed: (url: string, err: Error) => void = () => {},
): PreloadsStarting {
  const teardowns: [string, (server: S) => unknown][] = [];
  let tornDown = false;
  const teardown: PreloadTeardown = async (budget = new CloseBudget(Number.POSITIVE_INFINITY)) => {
    tornDown = true;
    await closeEachWithin({
      budget,
      items: () => teardowns.splice(0).reverse(),
      nameOf: ([url]) => url,
      close: ([, fn]) => fn(server),
      closeStep: "weftTeardown",
      failed: (url, err) => onTeardownError(url, asError(err)),
      unfinished: (url) => onTeardownUnfinished(url),
    });
  };
  const setUp = (async () => {
    for (const url of urls) {
      if (tornDown) break;
      try {
        const mod = await importModule(url);
        // Torn down meanwhile (the server closed): its weftSetup would have no weftTeardown.
        if (tornDown) throw new Error("not set up: the preload modules were torn down meanwhile");
        for (const name of ["weftSetup", "weftTeardown"]) {
          if (mod[name] !== undefined && typeof mod[name] !== "function") {
            throw new TypeError(`its ${name} export is not a function`);
          }
        }
        if (typeof mod.weftTeardown === "function") {
          teardowns.push([url, mod.weftTeardown as (server: S) => unknown]);
        }
        if (typeof mod.weftSetup === "function")
          await (mod.weftSetup as (server: S) => unknown)(server);
      } catch (err) {
        onSetupFailed(url, asError(err));
        // Bounded as a close's: one that never settles must not keep the start from failing.
        const budget = new CloseBudget(DEFAULT_CLOSE_TIMEOUT_S);
        await teardown(budget);
        budget.clear();
        throw new Error(`preload ${url}: ${asError(err).message}`, { cause: err });
      }
    }
    if (tornDown) throw new Error("the preload modules were torn down while they were set up");
  })();
  return { teardown, setUp };
}

/**
 * {@link startPreloads} as a scheduler's or worker's start runs them: each teardown
 * that fails or outlasts the close logged to `logger` ({@link preloadLogging}), and a
 * module that fails told to the start's `step` ({@link preloadFailed}), which a start
 * that times out meanwhile says.
 */
export function startServerPreloads<S>(
  urls: readonly string[],
  server: S,
  logger: PreloadLogger,
  step: { doing: string },
): PreloadsStarting {
  return startPreloads(urls, server, ...preloadLogging(logger), (url, err) => {
    step.doing = preloadFailed(url, err);
  });
}
