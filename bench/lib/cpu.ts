import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * CPU time per process group over a measurement window, from /proc (Linux): what each part of the
 * system used of the machine's cores while a figure was taken. A group is a root pid and, optionally,
 * all its descendants; children that exited during the window are counted through the root's
 * cutime/cstime (PostgreSQL backends, for one).
 */
export interface CpuGroup {
  name: string;
  /** Root pids of the group (undefined: not running). */
  pids: () => number[];
  descendants?: boolean;
  /** Only the process's main thread (a Node process's JavaScript runs there): near 100%, its event loop is saturated. */
  mainThread?: boolean;
}

/** Percent of ONE core per group (200% = both cores of a 2-core machine) and for the whole machine. */
export interface CpuUsage {
  groups: Record<string, number>;
  machineBusy: number;
  /** Busy time not in any group (other processes on the machine, the kernel's own threads). */
  other: number;
  cores: number;
  /** Length of the window. */
  seconds: number;
  /** Groups with no process running during the window (shown blank, not 0). */
  absent?: string[];
}

let hz: number | undefined;
function ticksPerSecond(): number {
  if (hz === undefined) {
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      hz = 100;
    }
  }
  return hz;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime */
  own: number;
  /** cutime + cstime: reaped children */
  reaped: number;
}

function readStat(pid: number | string): ProcStat | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // rest[0] is field 3 (state); utime is field 14.
    const f = (n: number) => Number(rest[n - 3]);
    return { pid: Number(pid), ppid: f(4), own: f(14) + f(15), reaped: f(16) + f(17) };
  } catch {
    return undefined;
  }
}

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(name);
    if (s) out.push(s);
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total };
}

function groupTicks(groups: CpuGroup[]): Record<string, number> {
  const stats = allStats();
  const byParent = new Map<number, ProcStat[]>();
  for (const s of stats) {
    const list = byParent.get(s.ppid) ?? [];
    list.push(s);
    byParent.set(s.ppid, list);
  }
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const out: Record<string, number> = {};
  for (const g of groups) {
    let ticks = 0;
    if (g.mainThread) {
      for (const pid of g.pids()) ticks += readStat(`${pid}/task/${pid}`)?.own ?? 0;
      out[g.name] = ticks;
      continue;
    }
    for (const root of g.pids()) {
      const r = byPid.get(root);
      if (!r) continue;
      ticks += r.own;
      if (!g.descendants) continue;
      ticks += r.reaped;
      const stack = [...(byParent.get(root) ?? [])];
      while (stack.length > 0) {
        const c = stack.pop()!;
        ticks += c.own + c.reaped;
        stack.push(...(byParent.get(c.pid) ?? []));
      }
    }
    out[g.name] = ticks;
  }
  return out;
}

/** Starts a window; `stop()` answers the usage since. */
export function cpuWindow(groups: CpuGroup[]): { stop(): CpuUsage } {
  const t0 = performance.now();
  const m0 = machineTicks();
  const g0 = groupTicks(groups);
  const running = new Set(groups.filter((g) => g.pids().length > 0).map((g) => g.name));
  return {
    stop() {
      const seconds = (performance.now() - t0) / 1000;
      const m1 = machineTicks();
      const g1 = groupTicks(groups);
      const hz = ticksPerSecond();
      const pct = (ticks: number) => Math.round((ticks / hz / seconds) * 100);
      const out: Record<string, number> = {};
      let sum = 0;
      for (const g of groups) {
        const d = Math.max(0, (g1[g.name] ?? 0) - (g0[g.name] ?? 0));
        out[g.name] = pct(d);
        if (!g.mainThread) sum += d;
      }
      for (const g of groups) if (g.pids().length > 0) running.add(g.name);
      const absent = groups.filter((g) => !running.has(g.name)).map((g) => g.name);
      const cores = os.cpus().length;
      // /proc/stat counts all cores: its busy share is of the whole machine; scale to "% of one core".
      const machineBusy = Math.round(((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * cores * 100);
      return {
        groups: out,
        machineBusy,
        other: Math.max(0, machineBusy - pct(sum)),
        cores,
        seconds: Math.round(seconds * 100) / 100,
        ...(absent.length > 0 ? { absent } : {}),
      };
    },
  };
}

/** Pids whose command line contains `needle` (to find a process the bench did not spawn itself). */
export function pidsMatching(needle: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(needle)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}
