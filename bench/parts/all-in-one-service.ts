import postgres from 'postgres';
import { jobsContext, measuring, partContext, type BenchContext, type PartResult } from '../lib/context.js';
import { untilSinkQuiet } from '../lib/http-figure.js';
import { batchLatency, type BatchLatencyResult } from './batch-latency.js';
import { scheduledBursts, type LatenessResult } from './scheduled-lateness.js';
import { SENDER_DOMAIN } from '../lib/payload.js';
import { prepareAccounts, SERVICE_ROOT, startService } from '../lib/service.js';
import { BATCH_SIZE, MANY_ACCOUNTS, MIN_MS, RUN_S } from '../lib/settings.js';
import { REPO_ROOT } from '../lib/children.js';
import { webhookFigures, type WebhooksResult } from './webhook-figures.js';
import { throughput, type ThroughputFigures } from './throughput.js';
import { STATEMENT_TIMES, startStatementTimes, statementLines, type StatementTimes } from '../lib/statement-times.js';
import { templateFigures, type TemplatesFigures } from './templates.js';
import { suppressionFigures, type SuppressionsFigures } from './suppressions.js';
import { INBOUND_RATE, INBOUND_SECONDS, inboundFigures, startInboundZone, type InboundFigures } from './inbound.js';
import type { BaselineFigures } from './baselines.js';

/** The figures of the all-in-one service (MAILER_ROLE=all): those of the parts that ran. */
export interface ServiceFigures {
  accountCount: number;
  throughput?: ThroughputFigures;
  batch?: BatchLatencyResult;
  templates?: TemplatesFigures;
  suppressions?: SuppressionsFigures;
  inbound?: InboundFigures;
  /** The scheduled bursts, in order: BENCH_SCHEDULED_COUNT, then BENCH_SCHEDULED_LARGE_COUNT. */
  scheduled?: LatenessResult[];
  webhooks?: WebhooksResult;
  /** BENCH_PGSS=1: PostgreSQL's time per statement over the throughput part. */
  statements?: StatementTimes;
}

/** Throughput, then batch latency, templates, scheduled lateness and webhooks on the same service process. */
/** `baselines`: the run's baseline figures when they ran (the sustained run's rate is half the slowest). */
export async function allInOneService(
  bench: BenchContext,
  baselines?: BaselineFigures,
): Promise<PartResult<ServiceFigures>> {
  const ctx = partContext(bench);
  const { parts, infra } = ctx;
  await infra.createDatabase('bench_service');
  // The inbound figure's senders have DNS of their own (SPF, DKIM, DMARC), which the service must ask.
  const inboundZone = parts.has('inbound') ? await startInboundZone() : undefined;
  const env: Record<string, string> = {
    ...infra.serviceEnv('bench_service', 'service'),
    ...(inboundZone ? { MAILER_DNS_SERVERS: inboundZone.servers } : {}),
  };
  const svc = await startService(env);
  const measured = await measuring(ctx, svc, async () => {
    const accounts = await prepareAccounts(svc, SENDER_DOMAIN, parts.has('throughput') ? MANY_ACCOUNTS - 1 : 0);
    ctx.log(
      `service started (pid ${svc.pid}, ${svc.baseUrl}${SERVICE_ROOT !== REPO_ROOT ? `, from ${SERVICE_ROOT}` : ''}); ${accounts.length} accounts with unlimited quota`,
    );
    const figures: ServiceFigures = { accountCount: accounts.length };
    if (parts.has('throughput')) {
      const statementTimes = STATEMENT_TIMES ? await startStatementTimes(env.DATABASE_URL!) : undefined;
      figures.throughput = await throughput(ctx, svc, accounts, baselines);
      if (statementTimes) {
        figures.statements = await statementTimes();
        ctx.log(`PostgreSQL's top statements over the throughput runs (${figures.statements.emails} emails):`);
        for (const line of statementLines(figures.statements)) ctx.log(`  ${line}`);
      }
    }
    // Batch latency, templates, scheduled lateness and webhooks once the throughput runs' mail is out.
    if ((['batch', 'templates', 'suppressions', 'inbound', 'scheduled', 'webhooks'] as const).some((p) => parts.has(p)))
      await untilSinkQuiet(ctx);
    const jobs = jobsContext(ctx, (prefix) => firedAt(env.DATABASE_URL!, prefix));
    if (parts.has('batch')) {
      ctx.log(`batch latency: ${ctx.sizes.batchRuns} batches of ${BATCH_SIZE}, one at a time`);
      figures.batch = await batchLatency(jobs, svc, ctx.sizes.batchRuns, BATCH_SIZE);
    }
    if (parts.has('templates')) {
      if (ctx.remaining() < ctx.planned(MIN_MS.templates!))
        ctx.log(`skipping the template figures: ${(ctx.remaining() / 1000).toFixed(0)} s left in the budget`);
      else {
        ctx.log(`templates: plain and templated sends at a fixed rate, then templated batches`);
        figures.templates = await templateFigures(ctx, jobs, svc, ctx.sizes.batchRuns);
      }
    }
    if (parts.has('suppressions')) {
      if (ctx.remaining() < ctx.planned(MIN_MS.suppressions!))
        ctx.log(`skipping the suppression figures: ${(ctx.remaining() / 1000).toFixed(0)} s left in the budget`);
      else {
        ctx.log(`suppressions: a 100,000-row CSV import (twice) and the export`);
        figures.suppressions = await suppressionFigures(ctx, svc);
      }
    }
    if (parts.has('inbound')) {
      ctx.log(
        `inbound: ${INBOUND_RATE} messages/s into the inbound listener for ${INBOUND_SECONDS} s, then one large message`,
      );
      const statementTimes = STATEMENT_TIMES ? await startStatementTimes(env.DATABASE_URL!) : undefined;
      figures.inbound = await inboundFigures(ctx, svc, inboundZone!.dkim);
      if (statementTimes) {
        const times = await statementTimes();
        const messages = figures.inbound.accepted;
        ctx.log(`PostgreSQL's top statements over the inbound run (${messages} messages):`);
        for (const line of statementLines(times, 16, 'msg', messages)) ctx.log(`  ${line}`);
      }
    }
    if (parts.has('scheduled')) {
      const counts = [ctx.sizes.scheduledCount, ctx.sizes.scheduledLargeCount];
      ctx.log(`scheduled lateness: ${counts.join(', then ')} emails due the same second`);
      figures.scheduled = await scheduledBursts(jobs, svc, counts);
    }
    if (!parts.has('webhooks')) return figures;
    if (ctx.remaining() < ctx.planned(MIN_MS.webhooks!)) {
      ctx.log(`skipping the webhook figures: ${(ctx.remaining() / 1000).toFixed(0)} s left in the budget`);
      return figures;
    }
    // The wait for the last webhooks and discards: up to 30 s, but not into what the later parts need.
    const later = (['deliverability', 'memory'] as const).reduce(
      (n, p) => n + (parts.has(p) ? ctx.planned(MIN_MS[p]!) : 0),
      0,
    );
    const waitCapMs = Math.min(30_000, ctx.remaining() - 20_000 - later);
    figures.webhooks = await webhookFigures(
      { ...jobs, databaseUrl: env.DATABASE_URL! },
      svc,
      ctx.sizes.webhookRate,
      RUN_S,
      waitCapMs,
    );
    return figures;
  });
  return { rows: ctx.rows, figures: measured };
}

/** Read-only, from the service's database: when each scheduled email with a subject starting with `prefix` fired. */
async function firedAt(databaseUrl: string, prefix: string): Promise<Map<string, number>> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await db<
      { subject: string; sent_at: Date | null }[]
    >`select subject, sent_at from scheduled_emails where subject like ${`${prefix}%`}`;
    return new Map(rows.filter((r) => r.sent_at).map((r) => [r.subject, r.sent_at!.getTime()]));
  } finally {
    await db.end();
  }
}
