import { describe, expect, it } from 'vitest';
import { compareRuns, median, spread, type RunFile } from '../../bench/lib/compare-runs.js';

const target = (key: string, value: number | null, met: boolean, shown?: string) => ({
  key,
  name: `${key} name`,
  value,
  target: '>= 0.90',
  met,
  ...(shown ? { shown } : {}),
});
const baseline = (key: string, value: number) => ({ key, what: `baseline: ${key}`, value, unit: 'mails/s' });

describe('bench compare: spread', () => {
  it('is (max - min) / median over the figures that were taken', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(spread([1500, 1550, 1450])).toBeCloseTo(100 / 1500, 10);
    // A run without the figure (NaN) does not count; fewer than two figures or a median of 0 give no spread.
    expect(spread([1000, NaN, 1100])).toBeCloseTo(100 / 1050, 10);
    expect(spread([1000])).toBeNaN();
    expect(spread([0, 0, 0])).toBeNaN();
  });
});

describe('bench compare: runs side by side', () => {
  const run = (over: Partial<RunFile>): RunFile => ({ at: 'then', commit: { head: 'abc1234', dirty: [] }, ...over });

  it("gives each target's figure and verdict per run, and each baseline's spread", () => {
    const lines = compareRuns(
      [
        run({
          targets: [target('delivered-ratio', 0.93, true), target('sustained', -3, true, 'slope -3/s')],
          baselines: [baseline('nodemailer-dkim-base', 1500)],
        }),
        run({
          targets: [target('delivered-ratio', 0.88, false), target('sustained', -1, true, 'slope -1/s')],
          baselines: [baseline('nodemailer-dkim-base', 1600)],
        }),
        run({
          targets: [target('delivered-ratio', 0.95, true), target('sustained', -2, true, 'slope -2/s')],
          baselines: [baseline('nodemailer-dkim-base', 1550)],
        }),
      ],
      ['a.json', 'b.json', 'c.json'],
    );
    expect(lines).toContain('  NOT MET 2/3  delivered-ratio name (target >= 0.90): 0.93 MET | 0.88 NOT MET | 0.95 MET');
    expect(lines).toContain(
      '  MET     3/3  sustained name (target >= 0.90): slope -3/s MET | slope -1/s MET | slope -2/s MET',
    );
    expect(lines).toContain(
      '  baseline: nodemailer-dkim-base [nodemailer-dkim-base]: 1500 | 1600 | 1550 mails/s; spread 6.5 %',
    );
    expect(lines.at(-1)).toMatch(/^NOT every target met/);
  });

  it('counts a target a run did not judge as not met, and reads files older than the keys and the baseline list', () => {
    const old: RunFile = run({
      // No `key` (older files): the name matches; no `baselines`: the rows whose what says baseline.
      targets: [{ name: 'x', value: null, target: '0', met: true }],
      rows: [baseline('insert', 3000), { key: 'service', what: 'service: max', value: 1400, unit: '200/s' }],
    });
    const lines = compareRuns([old, run({ targets: [], baselines: [baseline('insert', 3300)] })], ['old', 'new']);
    expect(lines).toContain('  NOT MET 1/2  x (target 0): n/a MET | -');
    expect(lines).toContain('  baseline: insert [insert]: 3000 | 3300 mails/s; spread 9.5 %');
    expect(lines.some((l) => l.includes('service: max'))).toBe(false);
  });

  it('says every target was met only when each run met each one', () => {
    const ok = run({ targets: [target('a', 1, true)], baselines: [] });
    expect(compareRuns([ok, ok, ok], ['1', '2', '3']).at(-1)).toBe('Every target MET in all 3 runs.');
  });
});
