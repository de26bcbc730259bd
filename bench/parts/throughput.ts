import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { PartContext } from '../lib/context.js';
import { drain, httpRow, httpTarget } from '../lib/http-figure.js';
import { onCleanup } from '../lib/lifecycle.js';
import { fixedRate, maxRate, type HttpRun, type HttpTarget } from '../lib/load.js';
import { limitFromCpu } from '../lib/report.js';
import type { ServiceHandle } from '../lib/service.js';
import {
  CONNECTIONS,
  MIN_MS,
  RAMP_S,
  RUN_S,
  scheduledLargeMs,
  SUSTAINED_DRAIN_MS,
  SUSTAINED_MS,
  SUSTAINED_S,
} from '../lib/settings.js';
import { basisText, sustainedRate, sustainedRun, type SustainedFigures } from '../lib/sustained.js';
import type { BaselineFigures } from './baselines.js';

/** One measured service run: its accepts and the rate at which what it accepted was delivered. */
export interface ServiceRun {
  run: HttpRun;
  deliveredPerSec: number;
}

/**
 * The service's accept and delivery runs: max rate, half the sustained rate, max rate over many accounts
 * and the sustained run (a fixed rate for 30 s) when time allows.
 */
export interface ThroughputFigures {
  max: ServiceRun;
  half: ServiceRun;
  halfRate: number;
  many?: ServiceRun;
  sustained?: SustainedFigures;
}

export async function throughput(
  ctx: PartContext,
  svc: ServiceHandle,
  accounts: { apiKey: string }[],
  baselines?: BaselineFigures,
): Promise<ThroughputFigures> {
  const connection = await Connection.connect({ address: ctx.infra.temporal.address });
  onCleanup('close the Temporal client', () => connection.close());
  const temporalClient = new Client({ connection, namespace: 'default' });
  const oneAccount = httpTarget(Number(new URL(svc.baseUrl).port), { authorization: `Bearer ${svc.apiKey}` });
  // Time left for this part: what the parts after it need at least is not ours (the second scheduled burst's
  // time is in the budget for it alone).
  const laterParts = ctx.planned(
    [...ctx.parts].reduce((n, p) => n + (MIN_MS[p] ?? 0), 0) +
      (ctx.parts.has('scheduled') ? scheduledLargeMs(ctx.sizes.scheduledLargeCount) : 0),
  );
  const left = () => ctx.remaining() - laterParts;
  const measure = (key: string, what: string, load: () => Promise<HttpRun>, drainCapMs: number) =>
    serviceRun(ctx, svc, temporalClient, { key, what, load, drainCapMs });

  // Warm-up: JIT, the pool's connections, the worker's workflow cache, the SMTP pool; then let it deliver.
  const before = (await ctx.infra.sinkCount()).total;
  const warm = await maxRate('service warm-up', oneAccount, CONNECTIONS, 3);
  const d = await drain(ctx, before, warm.ok, Math.min(45_000, left() - 100_000));
  ctx.log(`service warm-up: ${warm.ok} accepted, ${d.delivered} delivered in ${d.drainS.toFixed(1)} s`);

  const max = await measure(
    'service',
    'service: POST /v1/mail/emails, 1 account, max rate',
    () => maxRate('service', oneAccount, CONNECTIONS, RUN_S),
    Math.min(90_000, left() - 70_000),
  );
  // Half the sustained rate: what the service both accepts and delivers (the lower of its max accepted and
  // delivered rates), so that delivery keeps up during the run and the latency is that of a service in
  // steady state, not of one filling a backlog it cannot drain.
  const halfRate = Math.max(1, Math.round(Math.min(max.run.okPerSec, max.deliveredPerSec) / 2));
  // The sustained run comes last but is a target: its time is kept from the half and many-accounts runs.
  const half = await measure(
    'service-half',
    `service: 1 account, fixed ${halfRate}/s (half the sustained rate)`,
    () => fixedRate('service-half', oneAccount, halfRate, RUN_S, { rampS: RAMP_S }),
    Math.min(45_000, left() - SUSTAINED_MS),
  );
  let many: ServiceRun | undefined;
  // The many-accounts run takes its 10 s and a drain of 5 to 10 s; the later parts' reservations (MIN_MS) have
  // room to spare in a whole bench (which, without this run, ends well inside its 395 s).
  if (left() - SUSTAINED_MS <= 22_000)
    ctx.log(
      `skipping the many-accounts run: not enough time left in the budget (${SUSTAINED_MS / 1000} s kept for the sustained run)`,
    );
  else {
    const target: HttpTarget = {
      ...oneAccount,
      headersPerConnection: accounts.map((a) => ({ authorization: `Bearer ${a.apiKey}` })),
    };
    many = await measure(
      'service-10acc',
      `service: ${accounts.length} accounts, max rate`,
      () => maxRate('service-10acc', target, CONNECTIONS, RUN_S),
      Math.min(60_000, left() - SUSTAINED_MS - 10_000),
    );
  }
  const sustained = await sustainedFigure(ctx, oneAccount, sustainedRate(baselines, max.deliveredPerSec), left());
  return { max, half, halfRate, ...(many ? { many } : {}), ...(sustained ? { sustained } : {}) };
}

/** The sustained run when its reservation is left, else a logged skip. */
async function sustainedFigure(
  ctx: PartContext,
  target: HttpTarget,
  r: ReturnType<typeof sustainedRate>,
  leftMs: number,
): Promise<SustainedFigures | undefined> {
  if (leftMs < SUSTAINED_MS) {
    ctx.log(
      `skipping the sustained run: ${(leftMs / 1000).toFixed(0)} s left for it in the budget, it needs ${SUSTAINED_MS / 1000} s`,
    );
    return undefined;
  }
  ctx.log(`sustained run: ${r.rate}/s for ${SUSTAINED_S} s (${basisText(r.basis)})`);
  return sustainedRun(ctx, target, r, Math.min(SUSTAINED_DRAIN_MS, leftMs - SUSTAINED_S * 1000 - 3_000));
}

/** A measured service run and the delivery of what it accepted: a row for each. */
async function serviceRun(
  ctx: PartContext,
  svc: ServiceHandle,
  temporal: Client,
  { key, what, load, drainCapMs }: { key: string; what: string; load: () => Promise<HttpRun>; drainCapMs: number },
): Promise<ServiceRun> {
  const deliveryWorkflows = () => countDeliveryWorkflows(temporal);
  const before = (await ctx.infra.sinkCount()).total;
  const workflowsBefore = await deliveryWorkflows();
  const whole = ctx.window();
  const w = ctx.window();
  const run = await load();
  const cpu = w.stop();
  const sent = run.ok;
  const d = await drain(ctx, before, sent, Math.max(5_000, drainCapMs));
  const wholeCpu = whole.stop();
  await sleep(1000);
  const workflows = (await deliveryWorkflows()) - workflowsBefore;
  const total = run.durationS + d.drainS;
  const deliveredPerSec = Math.round(d.delivered / total);
  const row = httpRow(key, what, run, cpu);
  row.notes!.push(
    `delivered ${d.delivered} of ${sent} accepted in ${run.durationS.toFixed(1)} s run + ${d.drainS.toFixed(1)} s drain` +
      (d.complete ? '' : ' (drain cut short by the time budget)'),
  );
  if (d.duplicates > 0) row.notes!.push(`${d.duplicates} duplicate Message-IDs at the sink`);
  if (workflows > 0)
    row.notes!.push(
      `${workflows} delivery workflows for ${sent} emails (${(sent / workflows).toFixed(1)} emails per workflow)`,
    );
  const problems = svc.problems();
  if (problems.count > 0)
    row.notes!.push(`service logged ${problems.count} warnings/errors so far; last: ${problems.last.at(-1)}`);
  ctx.addRow(row);
  ctx.addRow({
    key: `${key}-delivered`,
    what: `${what}: delivered to sink`,
    value: deliveredPerSec,
    unit: 'mails/s',
    cpu: wholeCpu,
    notes: [
      `${d.delivered} delivered over run + drain (${total.toFixed(1)} s): ${d.atStart} during the run ` +
        `(${Math.round(d.atStart / run.durationS)}/s while accepting), ${d.delivered - d.atStart} in the drain` +
        (d.drainS > 1 ? ` (${Math.round((d.delivered - d.atStart) / d.drainS)}/s with no accepts)` : ''),
      ...(d.drainS > 1 ? [`drain alone: ${limitFromCpu(d.cpu, ctx.nodeThreads)}`] : []),
    ],
    detail: {
      delivered: d.delivered,
      deliveredDuringRun: d.atStart,
      accepted: sent,
      runS: run.durationS,
      drainS: d.drainS,
      complete: d.complete,
      workflows,
      drainCpu: d.cpu,
    },
  });
  return { run, deliveredPerSec };
}

/** Delivery workflows the service has started so far (visibility: settles within a second or so); NaN when it cannot say. */
async function countDeliveryWorkflows(temporal: Client): Promise<number> {
  try {
    return (await temporal.workflow.count('WorkflowType = "deliverEmailsWorkflow"')).count;
  } catch {
    return NaN;
  }
}
