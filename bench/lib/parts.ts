/**
 * Which parts of the bench run: all but `lists` by default; BENCH_ONLY=a,b runs only those, BENCH_SKIP=a,b
 * leaves those out (both take part names or the group names below). `lists` seeds 10,000,000 emails
 * (minutes) and `stats` 1,000,000 with their events, and `egress` watches a throttled site for minutes: each runs only
 * when BENCH_ONLY names it.
 */
export const PARTS = [
  'baselines',
  'throughput',
  'batch',
  'templates',
  'suppressions',
  'inbound',
  'scheduled',
  'webhooks',
  'deliverability',
  'memory',
  'lists',
  'stats',
  'egress',
] as const;
export type Part = (typeof PARTS)[number];
const DEFAULT_PARTS: Part[] = PARTS.filter((p) => p !== 'lists' && p !== 'stats' && p !== 'egress');

const GROUPS: Record<string, Part[]> = {
  jobs: ['batch', 'scheduled', 'memory'],
  service: ['throughput', 'batch', 'templates', 'suppressions', 'inbound', 'scheduled', 'webhooks', 'memory'],
};

function parse(variable: string, raw: string | undefined): Part[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .flatMap((name) => {
      if (GROUPS[name]) return GROUPS[name];
      if ((PARTS as readonly string[]).includes(name)) return [name as Part];
      throw new Error(
        `${variable}: unknown part "${name}"; parts: ${PARTS.join(', ')}; groups: ${Object.entries(GROUPS)
          .map(([g, p]) => `${g} (${p.join(', ')})`)
          .join(', ')}`,
      );
    });
}

export function selectedParts(env: NodeJS.ProcessEnv = process.env): Set<Part> {
  const only = parse('BENCH_ONLY', env.BENCH_ONLY);
  const skip = new Set(parse('BENCH_SKIP', env.BENCH_SKIP) ?? []);
  return new Set((only ?? DEFAULT_PARTS).filter((p) => !skip.has(p)));
}
