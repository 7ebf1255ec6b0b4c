import { setMaxListeners } from "node:events";

/**
 * An AbortController whose signal many listen to at once (every instruction in
 * flight, every reach check, every dial a plugin ties to a server's close):
 * Node's "possible EventTarget memory leak" warning past ten listeners, a false
 * alarm for such a signal, is turned off for it.
 */
export function manyListenersAbortController(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}
