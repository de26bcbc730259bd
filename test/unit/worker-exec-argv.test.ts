import { describe, expect, it } from 'vitest';
import { WORKER_SEMI_SPACE_MB, workerExecArgv } from '../../src/app/worker-process.js';

describe("the worker child's Node flags", () => {
  it("are the parent's, with delivery's semi-space size added", () => {
    expect(workerExecArgv(['--import', 'tsx'], undefined)).toEqual([
      '--import',
      'tsx',
      `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
    ]);
    expect(workerExecArgv([], '')).toEqual([`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`]);
  });

  it('leave a semi-space size the operator gave alone, in execArgv or NODE_OPTIONS, in any spelling', () => {
    expect(workerExecArgv(['--max-semi-space-size=8'], undefined)).toEqual(['--max-semi-space-size=8']);
    expect(workerExecArgv(['--max_semi_space_size', '8'], undefined)).toEqual(['--max_semi_space_size', '8']);
    expect(workerExecArgv(['--cpu-prof'], '--max-old-space-size=512 --max-semi-space-size=32')).toEqual(['--cpu-prof']);
  });

  it('are not fooled by a flag that only starts alike', () => {
    expect(workerExecArgv(['--max-semi-space-sizes=8'], '--min-semi-space-size=4')).toEqual([
      '--max-semi-space-sizes=8',
      `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
    ]);
  });
});
