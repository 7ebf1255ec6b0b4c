/** `1 worker`, `2 workers`; `many` for irregular plurals (`stimuli`). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
