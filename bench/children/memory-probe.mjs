// Preloaded (`--import`) into the service processes of the memory figure: on SIGUSR2 it runs a full
// garbage collection of the main thread's heap (Node started with --expose-gc) and writes
// process.memoryUsage() to BENCH_MEMORY_FILE. Nothing else: no timers, no effect until signalled.
// Plain JavaScript, not TypeScript: Node loads preloads in worker threads too (the Temporal SDK's
// workflow thread), where the tsx loader is not registered; it does nothing there.
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_MEMORY_FILE;
if (file && isMainThread) {
  let seq = 0;
  process.on('SIGUSR2', () => {
    const gc = typeof globalThis.gc === 'function';
    if (gc) globalThis.gc();
    seq += 1;
    fs.writeFileSync(file, JSON.stringify({ seq, gc, ...process.memoryUsage() }));
  });
}
