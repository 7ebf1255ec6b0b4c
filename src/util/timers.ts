/** The longest delay a Node.js timer waits, in ms (2^31 − 1): a longer one fires at once, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
