import { call } from './http.js';

/** One sample of a Prometheus text exposition: its name (with _bucket, _sum ...), labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A scrape, parsed: every sample, and the families declared by `# TYPE`. */
export interface Scrape {
  text: string;
  samples: Sample[];
  types: Map<string, string>;
  /** The sum of the samples named `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
  /** Whether some sample is named `name` (and has `labels`). */
  has(name: string, labels?: Record<string, string>): boolean;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the text format (version 0.0.4), as Prometheus reads it; throws on a line it cannot read. */
export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`the family ${type[1]} is declared twice`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL))
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    text,
    samples,
    types,
    sum: (name, labels) => matching(name, labels).reduce((a, s) => a + s.value, 0),
    has: (name, labels) => matching(name, labels).length > 0,
  };
}

/** GET /metrics of a base URL, parsed. */
export async function scrape(baseUrl: string, token?: string): Promise<Scrape> {
  const res = await call('GET', `${baseUrl}/metrics`, { token });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${res.text}`);
  return parseExposition(res.text);
}
