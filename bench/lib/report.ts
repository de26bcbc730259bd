import type { CpuUsage } from './cpu.js';

/** One line of the results table. */
export interface Row {
  key: string;
  what: string;
  value: number;
  unit: string;
  p50?: number;
  p99?: number;
  cpu?: CpuUsage;
  /** What bounds the figure, read from the CPU figures of its window. */
  limit?: string;
  /** CPU per unit of what: without it, `value` is taken as a rate per second (CPU ms per request, per mail). */
  cpuUnits?: { count: number; per: string };
  notes?: string[];
  detail?: Record<string, unknown>;
}

export interface Target {
  /** Stable across runs (the name may carry figures): what bench/compare.ts matches runs' targets by. */
  key: string;
  name: string;
  value: number;
  target: string;
  met: boolean;
  formula: string;
  /** How to show the value (default: two decimals). */
  shown?: string;
}

const THREAD_NAMES: Record<string, string> = {
  'srv-js': "the server's JavaScript thread",
  'wrk-js': "the worker's JavaScript thread",
};

/** Node processes run JavaScript on one thread: near 100% of a core, that thread is the bottleneck. */
const SATURATED_THREAD = 90;

export function limitFromCpu(cpu: CpuUsage, singleThreaded: string[]): string {
  const top = Object.entries(cpu.groups)
    .sort((a, b) => b[1] - a[1])
    .filter(([, v]) => v >= 5);
  const hotThreads = singleThreaded.filter((k) => (cpu.groups[k] ?? 0) >= SATURATED_THREAD);
  const list = top.map(([k, v]) => `${k} ${v}%`).join(', ');
  const capacity = cpu.cores * 100;
  const hot = hotThreads.map((k) => THREAD_NAMES[k] ?? `${k}'s JavaScript thread`);
  if (cpu.machineBusy >= capacity * 0.85) {
    return (
      `CPU: the ${cpu.cores} cores are busy (${cpu.machineBusy}% of ${capacity}%: ${list}, other ${cpu.other}%)` +
      (hot.length > 0 ? `; ${hot.join(', ')} at a full core` : '')
    );
  }
  if (hot.length > 0)
    return `one thread: ${hot.join(', ')} at a full core (${list}; machine ${cpu.machineBusy}% of ${capacity}%)`;
  return `not CPU (machine ${cpu.machineBusy}% of ${capacity}%: ${list}): waiting on I/O, commits, locks or round trips`;
}

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined || Number.isNaN(n)
    ? ''
    : Number.isInteger(n) || Math.abs(n) >= 100
      ? String(Math.round(n))
      : n.toFixed(digits);

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

/** CPU milliseconds each group spent per unit of the figure (per request, per mail, per start). */
export function cpuPerUnit(cpu: CpuUsage, rate: number): string {
  if (!(rate > 0)) return '';
  const parts = Object.entries(cpu.groups)
    .filter(([k, v]) => v > 0 && !k.endsWith('-js'))
    .map(([k, v]) => `${k} ${((v * 10) / rate).toFixed(2)}`);
  return `CPU ms per unit: ${parts.join(', ')}; other ${((cpu.other * 10) / rate).toFixed(2)}`;
}

/** CPU milliseconds each group spent per counted unit (per batch, per scheduled email) over the window. */
export function cpuPerCount(cpu: CpuUsage, units: { count: number; per: string }): string {
  if (!(units.count > 0)) return '';
  const ms = (pct: number) => ((pct / 100) * cpu.seconds * 1000) / units.count;
  const parts = Object.entries(cpu.groups)
    .filter(([k, v]) => v > 0 && !k.endsWith('-js'))
    .map(([k, v]) => `${k} ${ms(v).toFixed(ms(v) >= 100 ? 0 : 2)}`);
  return `CPU ms per ${units.per}: ${parts.join(', ')}; other ${ms(cpu.other).toFixed(2)}`;
}

/** Another workload on the machine above this share of a core makes a figure understate what this code can do. */
export const NOISY_OTHER = 25;

export function renderTable(rows: Row[], cpuColumns: string[]): string {
  const head = [
    'measurement',
    'value',
    'unit',
    'p50 ms',
    'p99 ms',
    ...cpuColumns.map((c) => `${c}%`),
    'other%',
    'busy%',
  ];
  const body = rows.map((r) => [
    r.what,
    fmt(r.value, 1),
    r.unit,
    fmt(r.p50, 2),
    fmt(r.p99, 2),
    ...cpuColumns.map((c) => (r.cpu && !r.cpu.absent?.includes(c) ? String(r.cpu.groups[c] ?? '') : '')),
    r.cpu ? `${r.cpu.other}${r.cpu.other >= NOISY_OTHER ? '!' : ''}` : '',
    r.cpu ? String(r.cpu.machineBusy) : '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, i > 0 && i !== 2)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function renderTargets(targets: Target[]): string {
  return targets
    .map(
      (t) =>
        `  ${t.met ? 'MET    ' : 'NOT MET'}  ${t.name}: ${t.shown ?? fmt(t.value, 2)} (target ${t.target})  = ${t.formula}`,
    )
    .join('\n');
}
