import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorkerProcess, type WorkerProcess } from '../../src/app/worker-process.js';
import { createLogger } from '../../src/logger.js';
import { eventually } from '../helpers/http.js';

const ENTRY = path.resolve('test/fixtures/worker-process-child.mjs');
const logger = createLogger('silent');
const started: WorkerProcess[] = [];

function logFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'worker-process-')), 'starts');
}
const pidsIn = (file: string) =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function start(mode: string, log: string): Promise<WorkerProcess> {
  const w = await startWorkerProcess({
    entry: ENTRY,
    env: { ...process.env, FIXTURE_MODE: mode, FIXTURE_LOG: log },
    logger,
    stopGraceMs: 5_000,
  });
  started.push(w);
  return w;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop()));
});

describe('the worker child process of npm start (role all)', () => {
  it("reports ready with its catcher, runs below the parent's priority, and stops on stop()", async () => {
    const log = logFile();
    const w = await start('stay', log);
    expect(w.ready.catcherUrl).toBe('smtp://127.0.0.1:1');
    const pid = w.pid()!;
    expect(pidsIn(log)).toEqual([pid]);
    expect(os.getPriority(pid)).toBe(Math.min(19, os.getPriority() + 10));
    // Delivery's young generation (worker-process.ts WORKER_SEMI_SPACE_MB), on the child's command line.
    expect(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=64');
    await w.stop();
    expect(alive(pid)).toBe(false);
    // Stopped on purpose: not started again.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(pidsIn(log)).toEqual([pid]);
  });

  it('is started again when it dies on its own', async () => {
    const log = logFile();
    const w = await start('die-once', log);
    const first = w.pid()!;
    await eventually(async () => pidsIn(log).length === 2 && w.pid() !== undefined && w.pid() !== first, 10_000, 100);
    expect(alive(first)).toBe(false);
    expect(alive(w.pid()!)).toBe(true);
  });

  it('a child that exits before it is ready fails the start', async () => {
    const log = logFile();
    await expect(start('fail-start', log)).rejects.toThrow(/exited while starting \(code 2/);
  });
});
