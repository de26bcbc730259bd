/**
 * `npm run bench:compare` (bench/compare.ts): several runs' results side by side, as issue 30 asks of its
 * closing note ("every figure met in three consecutive full runs, with the bench's own noise beside them").
 * Pure: the runs come in parsed (bench/results/*.json, as lib/write-results.ts writes them).
 */

/** What a result file holds of one target (lib/report.ts, Target); `key` is absent in files older than it. */
export interface RunTarget {
  key?: string;
  name: string;
  /** JSON has no NaN: a figure that could not be taken is null. */
  value: number | null;
  shown?: string;
  target: string;
  met: boolean;
}

export interface RunBaseline {
  key: string;
  what: string;
  value: number | null;
  unit: string;
}

/** One result file as read. `baselines` is absent in files older than it: the rows whose `what` says baseline stand in. */
export interface RunFile {
  at?: string;
  commit?: { head: string; dirty?: string[] };
  sourceChangedDuringRun?: boolean;
  parts?: string[];
  targets?: RunTarget[];
  baselines?: RunBaseline[];
  rows?: RunBaseline[];
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The spread of one figure across runs: (max - min) / median; NaN with fewer than two figures or a median of 0. */
export function spread(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x));
  if (v.length < 2) return NaN;
  const m = median(v);
  return m === 0 ? NaN : (Math.max(...v) - Math.min(...v)) / Math.abs(m);
}

const baselinesOf = (run: RunFile): RunBaseline[] =>
  run.baselines ?? (run.rows ?? []).filter((r) => r.what.startsWith('baseline'));

const keyOf = (t: RunTarget) => t.key ?? t.name;

const fmt = (v: number | null) =>
  v === null || Number.isNaN(v)
    ? 'n/a'
    : Number.isInteger(v) || Math.abs(v) >= 100
      ? String(Math.round(v))
      : v.toFixed(2);

/** Keys in first-seen order over all runs: a target or baseline only some runs have still gets its line. */
function keysInOrder<T>(lists: T[][], key: (x: T) => string): string[] {
  const seen = new Set<string>();
  for (const list of lists) for (const x of list) seen.add(key(x));
  return [...seen];
}

/** The lines `npm run bench:compare` prints for `runs` (named by `names`, e.g. their file names). */
export function compareRuns(runs: RunFile[], names: string[]): string[] {
  const out: string[] = ['Runs:'];
  runs.forEach((r, i) => {
    const dirty = r.commit?.dirty && r.commit.dirty.length > 0 ? ` + ${r.commit.dirty.length} changed files` : '';
    out.push(
      `  ${i + 1}. ${names[i]}: ${r.at ?? '?'}, commit ${r.commit?.head ?? '?'}${dirty}, parts ${(r.parts ?? []).join(',') || '?'}` +
        (r.sourceChangedDuringRun ? ' (WARNING: the code changed during the run)' : ''),
    );
  });

  const targets = runs.map((r) => r.targets ?? []);
  const targetKeys = keysInOrder(targets, keyOf);
  let allMet = targetKeys.length > 0;
  out.push(
    '',
    `Targets (the figure of runs ${runs.map((_, i) => i + 1).join(', ')}; a target a run did not judge: -):`,
  );
  for (const key of targetKeys) {
    const per = targets.map((list) => list.find((t) => keyOf(t) === key));
    const last = per.filter((t): t is RunTarget => t !== undefined).at(-1)!;
    const met = per.filter((t) => t?.met).length;
    if (met < runs.length) allMet = false;
    const cells = per.map((t) => (t ? `${t.shown ?? fmt(t.value)} ${t.met ? 'MET' : 'NOT MET'}` : '-'));
    out.push(
      `  ${met === runs.length ? 'MET    ' : 'NOT MET'} ${met}/${runs.length}  ${last.name} (target ${last.target}): ${cells.join(' | ')}`,
    );
  }
  if (targetKeys.length === 0) out.push('  (none: these files hold no targets)');

  const baselines = runs.map(baselinesOf);
  const baselineKeys = keysInOrder(baselines, (b) => b.key);
  out.push('', "Baselines (the bench's own noise: spread = (max - min) / median across the runs):");
  for (const key of baselineKeys) {
    const per = baselines.map((list) => list.find((b) => b.key === key));
    const last = per.filter((b): b is RunBaseline => b !== undefined).at(-1)!;
    const values = per.map((b) => b?.value ?? NaN);
    const s = spread(values);
    out.push(
      `  ${last.what} [${key}]: ${per.map((b) => (b ? fmt(b.value) : '-')).join(' | ')} ${last.unit}; ` +
        `spread ${Number.isNaN(s) ? 'n/a' : `${(s * 100).toFixed(1)} %`}`,
    );
  }
  if (baselineKeys.length === 0) out.push('  (none: these runs measured no baseline)');

  out.push(
    '',
    allMet
      ? `Every target MET in all ${runs.length} runs.`
      : `NOT every target met in all ${runs.length} runs (or a run did not judge one).`,
  );
  return out;
}
