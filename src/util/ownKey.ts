/**
 * Set `obj[key]` as an own, enumerable property. Assigned instead, a key named
 * `__proto__` (a task key, a worker address, a metadata key: any string) would
 * set the object's prototype and vanish as a key.
 */
export function setOwnKey(obj: object, key: string | number, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
