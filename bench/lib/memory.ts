import fs from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from './children.js';

/**
 * The memory of one process: VmRSS from /proc/<pid>/status (what the kernel has given it, JavaScript
 * heap, Node's and the Temporal SDK's native memory alike), and, through bench/children/memory-probe.mjs
 * preloaded into it, the main thread's V8 heap after a full GC (the Temporal SDK runs workflow code in a
 * thread of its own, whose heap is in VmRSS but not in this figure).
 */
export const MEMORY_PROBE = path.join(REPO_ROOT, 'bench/children/memory-probe.mjs');

export async function vmRssKiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'latin1');
  const kib = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kib);
}

export interface HeapSample {
  seq: number;
  gc: boolean;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** Signals the probe and waits for its answer (undefined when it does not answer within a second). */
export async function heapAfterGc(pid: number, file: string): Promise<HeapSample | undefined> {
  const read = async () => {
    try {
      return JSON.parse(await fs.readFile(file, 'utf8')) as HeapSample;
    } catch {
      return undefined;
    }
  };
  // SIGUSR2 ends a process that does not handle it: signal only one whose probe is listening.
  const status = await fs.readFile(`/proc/${pid}/status`, 'latin1');
  const caught = BigInt(`0x${/^SigCgt:\s+([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
  if ((caught & (1n << 11n)) === 0n) return undefined;
  const before = (await read())?.seq ?? 0;
  process.kill(pid, 'SIGUSR2');
  const deadline = performance.now() + 1000;
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    const s = await read();
    if (s && s.seq > before) return s;
  }
  return undefined;
}
