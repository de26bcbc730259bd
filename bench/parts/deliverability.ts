import { startChild, type BenchChild } from '../lib/children.js';
import { measuring, partContext, type BenchContext, type PartContext, type PartResult } from '../lib/context.js';
import { benchDkimKey, type DkimKey, type SignCost } from '../lib/dkim-key.js';
import { DESTINATIONS, startMxZone } from '../lib/mx-zone.js';
import { SENDER_DOMAIN } from '../lib/payload.js';
import { MIN_MS } from '../lib/settings.js';
import { nodemailerSends } from './baselines.js';
import { deliveryRun, type DeliveryRun } from './delivery-run.js';

/**
 * Deliverability (issue 11, bench item): what DKIM signing costs, raw nodemailer signing every message,
 * and the service delivering the same load to 10 destination domains through the relay and directly to
 * each domain's MX host, one service process after the other.
 */
export interface DeliverabilityFigures {
  dkim: SignCost;
  signedNodemailerRate: number;
  relay: DeliveryRun;
  direct: DeliveryRun;
}

/** Messages per block of the DKIM cost, and blocks of each kind (alternating). */
const SIGN_MESSAGES = 500;
const SIGN_ROUNDS = 2;
/** The signed baseline's run: shorter than the other baselines' 10 s to leave the budget to the rest. */
const SIGNED_BASELINE_S = 5;
const SIGNED_WARMUP_S = 1;
/** The least and most time each half waits for its mail to arrive. */
const CAP_MIN_MS = 10_000;
const CAP_MAX_MS = 30_000;
/** What one half takes besides waiting: starting and stopping its service, the warm-up. */
const HALF_OVERHEAD_MS = 12_000;

export async function deliverability(bench: BenchContext): Promise<PartResult<DeliverabilityFigures>> {
  const ctx = partContext(bench);
  const key = benchDkimKey(SENDER_DOMAIN);
  const child = await startChild<object>('nodemailer sender (DKIM)', 'mail-sender.ts');
  const { dkim, signedNodemailerRate } = await measuring(ctx, child, async () => ({
    dkim: await dkimCost(ctx, child, key),
    signedNodemailerRate: await nodemailerSends(ctx, child, {
      key: 'nodemailer-dkim', what: 'baseline: raw nodemailer pooled sends, DKIM-signed', dkim: key, runS: SIGNED_BASELINE_S, warmupS: SIGNED_WARMUP_S,
    }),
  }));

  const mx = await ctx.infra.sink.request<{ port: number }>('listenMx', { addresses: DESTINATIONS.map((d) => d.address) });
  const dns = await startMxZone();
  ctx.log(`deliverability: sink also on ${DESTINATIONS[0]!.address}..${DESTINATIONS.at(-1)!.address}:${mx.port}, DNS for ${DESTINATIONS.length} domains at ${dns.servers}`);
  const emails = ctx.sizes.deliverabilityEmails;
  const relay = await deliveryRun(ctx, 'relay', { dns, mxPort: mx.port, emails, capMs: capFor(ctx, 2) });
  const direct = await deliveryRun(ctx, 'direct', { dns, mxPort: mx.port, emails, capMs: capFor(ctx, 1) });
  await dns.stop();
  return { rows: ctx.rows, figures: { dkim, signedNodemailerRate, relay, direct } };
}

/** The drain cap of one of the `halves` still to run: an equal share of what the parts after this one leave. */
function capFor(ctx: PartContext, halves: number): number {
  const later = ctx.parts.has('memory') ? MIN_MS.memory! : 0;
  const share = (ctx.remaining() - later) / halves - HALF_OVERHEAD_MS;
  return Math.round(Math.max(CAP_MIN_MS, Math.min(CAP_MAX_MS, share)));
}

/** CPU per message of building the bench email with and without an RSA-2048 DKIM signature. */
async function dkimCost(ctx: PartContext, child: BenchChild<object>, key: DkimKey): Promise<SignCost> {
  const c = await child.request<SignCost>('signCost', { n: SIGN_MESSAGES, rounds: SIGN_ROUNDS, dkim: key });
  ctx.addRow({
    key: 'dkim-cost', what: 'DKIM: RSA-2048 signing, CPU per message (nodemailer)', value: c.signCpuMs, unit: 'CPU ms/mail',
    notes: [
      `the composed bench email built by a stream transport ${c.messages} times unsigned and ${c.messages} times signed, alternating blocks of ${SIGN_MESSAGES}: ` +
        `${c.unsignedCpuMs} and ${c.signedCpuMs} CPU ms per message (wall ${c.unsignedWallMs} and ${c.signedWallMs} ms); ${c.unsignedBytes} and ${c.signedBytes} bytes`,
      `signing alone at 1 core: at most ${c.signCpuMs > 0 ? Math.round(1000 / c.signCpuMs) : '?'} messages/s`,
    ],
    detail: { ...c },
  });
  return c;
}
