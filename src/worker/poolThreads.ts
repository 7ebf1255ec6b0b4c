/**
 * The most pool threads one process starts for its workers' tasks (the threads
 * executor): each is a V8 isolate of several MB, all started at once, and
 * `--nthreads 100000` grew the process by some 300 MB a second, saying nothing,
 * until the machine ran out of memory. Inline workers start no thread.
 */
export const MAX_POOL_THREADS = 1024;
