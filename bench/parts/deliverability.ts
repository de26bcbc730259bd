import { startChild, type BenchChild, type ReadyOnly } from '../lib/children.js';
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
const SIGN_MESSAGES = 300;
const SIGN_ROUNDS = 2;
/** The signed baseline's run: shorter than the other baselines' 10 s, for the time budget. */
const SIGNED_BASELINE_S = 4;
const SIGNED_WARMUP_S = 1;
/** The send time of each half in the whole bench, where every second of this part is one the memory figure does not get. */
const WHOLE_BENCH_SEND_S = 5;
/** What one half takes besides sending: starting and stopping its service, the warm-up, the last arrivals. */
const HALF_OVERHEAD_MS = 10_000;

export async function deliverability(bench: BenchContext): Promise<PartResult<DeliverabilityFigures>> {
  const ctx = partContext(bench);
  const key = benchDkimKey(SENDER_DOMAIN);
  const child = await startChild<ReadyOnly>('nodemailer sender (DKIM)', 'mail-sender.ts');
  const { dkim, signedNodemailerRate } = await measuring(ctx, child, async () => ({
    dkim: await dkimCost(ctx, child, key),
    signedNodemailerRate: await nodemailerSends(ctx, child, {
      key: 'nodemailer-dkim',
      what: 'baseline: raw nodemailer pooled sends, DKIM-signed',
      dkim: key,
      runS: SIGNED_BASELINE_S,
      warmupS: SIGNED_WARMUP_S,
    }),
  }));

  const mx = await ctx.infra.sink.request<{ port: number }>('listenMx', {
    addresses: DESTINATIONS.map((d) => d.address),
  });
  const dns = await startMxZone();
  ctx.log(
    `deliverability: sink also on ${DESTINATIONS[0]!.address}..${DESTINATIONS.at(-1)!.address}:${mx.port}, DNS for ${DESTINATIONS.length} domains at ${dns.servers}`,
  );
  // The same send time for both halves, so that the two figures are taken alike.
  const sendS = sendSeconds(ctx);
  if (sendS < ctx.sizes.deliverabilitySeconds)
    ctx.log(
      `deliverability: ${sendS} s of sending per mode, not ${ctx.sizes.deliverabilitySeconds}: the memory figure's time`,
    );
  const relay = await deliveryRun(ctx, 'relay', { dns, mxPort: mx.port, sendS });
  const direct = await deliveryRun(ctx, 'direct', { dns, mxPort: mx.port, sendS });
  await dns.stop();
  return { rows: ctx.rows, figures: { dkim, signedNodemailerRate, relay, direct } };
}

/**
 * Each half's send time: BENCH_DELIVERABILITY_SECONDS; with the memory figure after this part (the whole
 * bench), 5 s at most, since the memory figure creates as many scheduled emails as the time left allows; and
 * never so long that the memory figure would be left less than its MIN_MS.
 */
function sendSeconds(ctx: PartContext): number {
  const later = ctx.parts.has('memory') ? ctx.planned(MIN_MS.memory!) : 0;
  const share = Math.floor(((ctx.remaining() - later) / 2 - HALF_OVERHEAD_MS) / 1000);
  const asked = ctx.parts.has('memory')
    ? Math.min(WHOLE_BENCH_SEND_S, ctx.sizes.deliverabilitySeconds)
    : ctx.sizes.deliverabilitySeconds;
  return Math.max(Math.min(3, asked), Math.min(asked, share));
}

/** CPU per message of building the bench email with and without an RSA-2048 DKIM signature. */
async function dkimCost(ctx: PartContext, child: BenchChild<ReadyOnly>, key: DkimKey): Promise<SignCost> {
  const c = await child.request<SignCost>('signCost', { n: SIGN_MESSAGES, rounds: SIGN_ROUNDS, dkim: key });
  ctx.addRow({
    key: 'dkim-cost',
    what: 'DKIM: RSA-2048 signing, CPU per message (nodemailer)',
    value: c.signCpuMs,
    unit: 'CPU ms/mail',
    notes: [
      `the composed bench email built by a stream transport ${c.messages} times unsigned and ${c.messages} times signed, alternating blocks of ${SIGN_MESSAGES}: ` +
        `${c.unsignedCpuMs} and ${c.signedCpuMs} CPU ms per message (wall ${c.unsignedWallMs} and ${c.signedWallMs} ms); ${c.unsignedBytes} and ${c.signedBytes} bytes`,
      `signing alone at 1 core: at most ${c.signCpuMs > 0 ? Math.round(1000 / c.signCpuMs) : '?'} messages/s`,
    ],
    detail: { ...c },
  });
  return c;
}
