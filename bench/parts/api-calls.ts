import { percentiles, type Percentiles } from '../lib/load.js';
import { EMAIL_REQUEST } from '../lib/payload.js';
import type { ServiceHandle } from '../lib/service.js';

/**
 * The REST calls of the job figures (bench/README.md, "Batch jobs, scheduled sends, worker memory"): every
 * email of these figures has a subject `[bench <tag>] <n>`, unique in the run, by which the sink
 * (bench/children/sink.ts) tracks when it arrived.
 */

/** What the sink answers of the emails with one subject prefix: distinct subjects, all arrivals, the first and last first arrival. */
export interface Arrivals {
  distinct: number;
  total: number;
  firstAt: number | null;
  lastAt: number | null;
}

export const ceilSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;

/** One API call with the account's key; answers the status, the parsed body and how long it took. */
export async function call<T>(
  service: ServiceHandle,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<{ status: number; body: T | undefined; ms: number; error?: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${service.baseUrl}/v1/mail${pathname}`, {
      method,
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: T | undefined;
    try {
      parsed = JSON.parse(text) as T;
    } catch {
      parsed = undefined;
    }
    return {
      status: res.status,
      body: parsed,
      ms: performance.now() - t0,
      ...(res.ok ? {} : { error: text.slice(0, 300) }),
    };
  } catch (err) {
    return { status: 0, body: undefined, ms: performance.now() - t0, error: (err as Error).message };
  }
}

export const email = (subject: string) => ({ ...EMAIL_REQUEST, subject });

/** Runs fn(0..n-1) with `concurrency` calls in flight; stops starting new ones at `deadline` (performance.now()). */
export async function inFlight(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
  deadline = Infinity,
): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n && performance.now() < deadline) await fn(next++);
    }),
  );
  return Math.min(next, n);
}

export interface Creation {
  /** Subjects of the scheduled emails the API accepted (200). */
  created: string[];
  statuses: Record<string, number>;
  firstError?: string;
  elapsedS: number;
  perSec: number;
  latencyMs: Percentiles;
  /** Accepted after their own scheduled_at had passed (would fire late through no fault of the firing). */
  createdAfterDue: number;
}

/**
 * Schedules `n` emails for `dueAt` (one time, or the i-th email's), subjects `${prefix} <i>`,
 * `concurrency` requests in flight.
 */
export async function scheduleMany(
  service: ServiceHandle,
  prefix: string,
  n: number,
  dueAt: number | ((i: number) => number),
  concurrency: number,
  deadline = Infinity,
): Promise<Creation> {
  const due = typeof dueAt === 'number' ? () => dueAt : dueAt;
  const created: string[] = [];
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let firstError: string | undefined;
  let createdAfterDue = 0;
  const t0 = performance.now();
  await inFlight(
    n,
    concurrency,
    async (i) => {
      const subject = `${prefix} ${i}`;
      const at = due(i);
      const r = await call<{ id: string }>(service, 'POST', '/emails/schedule', {
        ...email(subject),
        scheduled_at: new Date(at).toISOString(),
      });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 200) {
        created.push(subject);
        latencies.push(r.ms);
        if (Date.now() >= at) createdAfterDue += 1;
      } else firstError ??= `${r.status} ${r.error ?? ''}`;
    },
    deadline,
  );
  const elapsedS = (performance.now() - t0) / 1000;
  return {
    created,
    statuses,
    ...(firstError ? { firstError } : {}),
    elapsedS: Math.round(elapsedS * 100) / 100,
    perSec: Math.round(created.length / elapsedS),
    latencyMs: percentiles(latencies),
    createdAfterDue,
  };
}

export const refusedNote = (statuses: Record<string, number>, firstError?: string): string[] => {
  const refused = Object.entries(statuses)
    .filter(([s]) => s !== '200')
    .map(([s, n]) => `${n} x ${s === '0' ? 'connection error' : s}`);
  return refused.length > 0 ? [`non-200 answers: ${refused.join(', ')}; first: ${firstError}`] : [];
};

let tagSeq = 0;
/** A tag unique in the run, for the subjects of one figure's emails. */
export const tag = (kind: string) => `${kind}${(++tagSeq).toString(36)}`;

/** Scheduled emails are created with this many requests in flight. */
export const CONCURRENCY = 32;
