import fs from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext, PartContext } from '../lib/context.js';
import { untilSinkQuiet } from '../lib/http-figure.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import { EMAIL_REQUEST } from '../lib/payload.js';
import type { ServiceHandle } from '../lib/service.js';
import { BATCH_SIZE } from '../lib/settings.js';
import { call, tag } from './api-calls.js';
import { batchLatency, type BatchLatencyResult } from './batch-latency.js';

/**
 * Templates (issue 24, point 7; bench/README.md, "Templates"): what a templated send costs the API process
 * against the same send with its content written out, and the batch figure with 100 templated items, each with
 * variables of its own (mail merge).
 */

/** The fixed rate of the CPU figure: moderate, well under what the service delivers, the same for both sides. */
export const TEMPLATES_RATE = 300;
/**
 * One stream of sends at that rate, switching between the plain and the templated body every second
 * (SEGMENT_MS), in the order A B B A A B ...: 40 segments, so 20 pairs of adjacent seconds, after 4 s of the
 * same as warm-up. Adjacent seconds share the machine's state (another workload, the worker's deliveries, the
 * CPU's clock): separate runs of a few seconds each measured 0.86 to 1.5 ms per plain email on this shared
 * machine, more than the difference the target is about. Single pairs still range from 0.75 to 1.6 there, so
 * the median of 10 moved by ±0.05 from run to run; 20 halve that spread's effect on the median (session 13).
 * BENCH_TEMPLATE_SEGMENTS sets another even count.
 */
const SEGMENT_MS = 1_000;
const SEGMENTS = Number(process.env.BENCH_TEMPLATE_SEGMENTS ?? 40);
const WARMUP_SEGMENTS = 4;
/** The target: a templated send costs the API process at most this much more CPU than the plain one. */
export const TEMPLATE_CPU_RATIO = 1.1;

/** One side's CPU runs together: accepted emails, CPU ms of the API process per accepted email, accept latency. */
export interface TemplateSide {
  accepted: number;
  cpuMsPerEmail: number;
  /** The same from /proc/<pid>/stat (10 ms ticks, exited threads included): a check on the precise figure. */
  tickMsPerEmail: number;
  latencyMs: Percentiles;
}

export interface TemplatesFigures {
  rate: number;
  /** Per pair of adjacent segments: CPU ms of the API process per accepted email, and templated / plain. */
  pairs: { order: string; plainMs: number; templatedMs: number; ratio: number }[];
  /** The median of the pairs' ratios: what the target judges. */
  ratio: number;
  plain: TemplateSide;
  templated: TemplateSide;
  /** Answers other than 200 (a refused send costs less: the ratio is then not judged met). */
  refused: number;
  /** The API process's CPU with nothing sent, ms per second (in both sides' figures alike). */
  idleMsPerSec: number;
  htmlBytes: number;
  batch?: BatchLatencyResult;
}

/**
 * An order confirmation as a shop would send it: a greeting, the order's lines in an `{{#each}}` (5 here), the
 * totals and the address, in a table layout with inline styles (about 5 KB of html), and a text part. `ref`
 * starts the subject only where the sink must track it (the batch figure: `[bench <tag>] <n> `).
 */
export const ORDER_TEMPLATE = {
  name: 'Order confirmation (bench)',
  subject: '{{ref}}Your order {{order.number}} is confirmed',
  variables: [{ name: 'ref', required: false }],
  html: `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Your order {{order.number}}</title></head>
<body style="margin:0;padding:0;background:#f4f5f7;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2937">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;padding:24px 0">
<tr><td align="center">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:8px;overflow:hidden;border:1px solid #e5e7eb">
<tr><td style="background:#111827;padding:20px 32px;color:#ffffff;font-size:20px;font-weight:600">Example Store</td></tr>
<tr><td style="padding:32px 32px 8px 32px;font-size:16px;line-height:24px">
<p style="margin:0 0 16px 0">Hi {{customer.first_name}},</p>
<p style="margin:0 0 16px 0">Thanks for your order! We have received it and are getting it ready. You will get another
email with the tracking number as soon as it ships. Order <strong>{{order.number}}</strong>, placed on {{order.date}}.</p>
</td></tr>
<tr><td style="padding:8px 32px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse;font-size:14px;line-height:20px">
<tr>
<th align="left" style="padding:8px 0;border-bottom:2px solid #e5e7eb;color:#6b7280;font-weight:600">Item</th>
<th align="center" style="padding:8px 0;border-bottom:2px solid #e5e7eb;color:#6b7280;font-weight:600">Qty</th>
<th align="right" style="padding:8px 0;border-bottom:2px solid #e5e7eb;color:#6b7280;font-weight:600">Price</th>
</tr>
{{#each order.items}}
<tr>
<td style="padding:12px 0;border-bottom:1px solid #f3f4f6"><span style="display:block;font-weight:600;color:#111827">{{name}}</span>
<span style="display:block;color:#6b7280;font-size:12px">SKU {{sku}}{{#if variant}} &middot; {{variant}}{{/if}}</span></td>
<td align="center" style="padding:12px 0;border-bottom:1px solid #f3f4f6">{{qty}}</td>
<td align="right" style="padding:12px 0;border-bottom:1px solid #f3f4f6">{{../currency}} {{price}}</td>
</tr>
{{/each}}
<tr><td colspan="2" align="right" style="padding:12px 8px 4px 0;color:#6b7280">Subtotal</td><td align="right" style="padding:12px 0 4px 0">{{currency}} {{order.subtotal}}</td></tr>
<tr><td colspan="2" align="right" style="padding:4px 8px 4px 0;color:#6b7280">Shipping</td><td align="right" style="padding:4px 0">{{currency}} {{order.shipping}}</td></tr>
<tr><td colspan="2" align="right" style="padding:4px 8px 4px 0;color:#6b7280">Tax</td><td align="right" style="padding:4px 0">{{currency}} {{order.tax}}</td></tr>
<tr><td colspan="2" align="right" style="padding:8px 8px 12px 0;font-weight:600;border-top:2px solid #e5e7eb">Total</td><td align="right" style="padding:8px 0 12px 0;font-weight:600;border-top:2px solid #e5e7eb">{{currency}} {{order.total}}</td></tr>
</table>
</td></tr>
<tr><td style="padding:16px 32px;font-size:14px;line-height:20px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr>
<td valign="top" width="50%" style="padding-right:16px"><p style="margin:0 0 4px 0;color:#6b7280;font-weight:600">Shipping to</p>
<p style="margin:0">{{customer.first_name}} {{customer.last_name}}<br>{{address.line1}}<br>{{address.postcode}} {{address.city}}<br>{{address.country}}</p></td>
<td valign="top" width="50%"><p style="margin:0 0 4px 0;color:#6b7280;font-weight:600">Delivery</p>
<p style="margin:0">{{shipping_method}}<br>Estimated arrival: {{order.eta}}</p></td>
</tr></table>
</td></tr>
<tr><td align="center" style="padding:16px 32px 32px 32px">
<a href="{{order.url}}" style="display:inline-block;padding:12px 24px;background:#2563eb;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600;font-size:15px">View your order</a>
</td></tr>
<tr><td style="padding:20px 32px;background:#f9fafb;border-top:1px solid #e5e7eb;font-size:12px;line-height:18px;color:#6b7280">
<p style="margin:0 0 8px 0">Questions about your order? Reply to this email or visit <a href="https://help.example.com" style="color:#2563eb">our help centre</a>;
we answer within one working day. You can return any item within 30 days of delivery.</p>
<p style="margin:0">Example Store Ltd &middot; 1 Market Street &middot; London EC1A 1AA &middot; United Kingdom. You receive this email because you placed an order with us.</p>
</td></tr>
</table>
</td></tr>
</table>
</body></html>`,
  text: `Hi {{customer.first_name}},

Thanks for your order! We have received it and are getting it ready. You will get another email with the
tracking number as soon as it ships.

Order {{order.number}}, placed on {{order.date}}
{{#each order.items}}
- {{qty}} x {{name}} (SKU {{sku}}{{#if variant}}, {{variant}}{{/if}}): {{../currency}} {{price}}
{{/each}}

Subtotal: {{currency}} {{order.subtotal}}
Shipping: {{currency}} {{order.shipping}}
Tax:      {{currency}} {{order.tax}}
Total:    {{currency}} {{order.total}}

Shipping to: {{customer.first_name}} {{customer.last_name}}, {{address.line1}}, {{address.postcode}} {{address.city}}, {{address.country}}
Delivery: {{shipping_method}}, estimated arrival {{order.eta}}

View your order: {{order.url}}

Questions? Reply to this email; we answer within one working day.
Example Store Ltd, 1 Market Street, London EC1A 1AA, United Kingdom`,
};

const PRODUCTS = [
  ['Merino crew sweater', 'MS-2041', 'Navy / M', '89.00'],
  ['Organic cotton T-shirt', 'OT-1180', 'White / M', '24.00'],
  ['Canvas tote bag', 'TB-0032', '', '18.50'],
  ['Wool socks, 3 pairs', 'WS-3303', 'Grey / 41-43', '21.00'],
  ['Leather card holder', 'LC-0917', 'Tan', '35.00'],
  ['Linen shirt', 'LS-2210', 'Sand / L', '59.00'],
  ['Rain jacket', 'RJ-7781', 'Olive / M', '129.00'],
] as const;

/** The variables of order `n`: its own customer, number, lines (5 of 7 products) and totals. */
export function orderVariables(n: number, ref?: string): Record<string, unknown> {
  const items = Array.from({ length: 5 }, (_, k) => {
    const [name, sku, variant, price] = PRODUCTS[(n + k) % PRODUCTS.length]!;
    return { name, sku, variant, qty: 1 + ((n + k) % 3), price };
  });
  const subtotal = items.reduce((s, i) => s + i.qty * Number(i.price), 0);
  const tax = Math.round(subtotal * 20) / 100;
  return {
    ...(ref !== undefined ? { ref } : {}),
    currency: 'GBP',
    shipping_method: 'Standard delivery (2-4 working days)',
    customer: { first_name: `Ada${n}`, last_name: 'Lovelace' },
    address: { line1: `${10 + (n % 90)} Baker Street`, postcode: 'NW1 6XE', city: 'London', country: 'United Kingdom' },
    order: {
      number: `#A-${100_000 + n}`,
      date: '27 November 2026',
      eta: '1 December 2026',
      url: `https://shop.example.com/orders/A-${100_000 + n}?utm_source=email&utm_medium=transactional`,
      items,
      subtotal: subtotal.toFixed(2),
      shipping: '4.95',
      tax: tax.toFixed(2),
      total: (subtotal + 4.95 + tax).toFixed(2),
    },
  };
}

/**
 * CPU time of the API process so far, two ways: the scheduler's own sum over its live threads
 * (`se.sum_exec_runtime` of /proc/<pid>/task/<tid>/sched, ns precision; a Node process's threads live as long as
 * it does) and /proc/<pid>/stat's utime + stime (10 ms ticks, threads that ended included). The ticks alone are
 * too coarse here: a one-second segment costs the process a few hundred ms.
 */
function processCpuMs(pid: number): { sched: number; ticks: number } {
  let sched = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/sched`, 'latin1');
      sched += Number(/se\.sum_exec_runtime\s*:\s*([\d.]+)/.exec(text)?.[1] ?? NaN);
    } catch {
      // a thread that ended
    }
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3; utime and stime are fields 14 and 15; USER_HZ is 100 on Linux.
  const ticks = (Number(f[11]) + Number(f[12])) * 10;
  return { sched, ticks };
}

type Side = 'plain' | 'templated';

/** One second of the stream: its side, what it sent and got, and the API process's CPU over it. */
interface Segment {
  side: Side;
  sent: number;
  statuses: Record<string, number>;
  latencies: number[];
  cpuMs: number;
  tickMs: number;
}

/**
 * Sends at `rate` per second, open loop (request i at start + i / rate, whether earlier ones were answered or
 * not), with the body of segment k's side; reads the API process's CPU at every segment boundary. One keep-alive
 * agent, so connections are made in the warm-up, not in the figure. A request is counted in the segment that
 * sent it: the few still in flight at a boundary (p50 latency is a few ms of a 1 s segment) are charged to the
 * next, in both directions alike.
 */
async function pacedStream(
  url: URL,
  headers: Record<string, string>,
  bodies: Record<Side, string>,
  plan: Side[],
  rate: number,
  pid: number,
): Promise<Segment[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const post = (body: string, into: Segment): Promise<void> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = String(res.statusCode ?? 0);
            into.statuses[status] = (into.statuses[status] ?? 0) + 1;
            if (status === '200') into.latencies.push(performance.now() - t0);
            resolve();
          });
        },
      );
      req.on('error', () => {
        into.statuses['0'] = (into.statuses['0'] ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  const inFlight = new Set<Promise<void>>();
  const segments: Segment[] = [];
  const start = performance.now() + 20;
  let i = 0;
  let cpu = processCpuMs(pid);
  try {
    for (const [k, side] of plan.entries()) {
      const seg: Segment = { side, sent: 0, statuses: {}, latencies: [], cpuMs: 0, tickMs: 0 };
      const end = start + (k + 1) * SEGMENT_MS;
      for (let due = start + (i * 1000) / rate; due < end; i += 1, due = start + (i * 1000) / rate) {
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const p = post(bodies[side], seg);
        inFlight.add(p);
        void p.then(() => inFlight.delete(p));
        seg.sent += 1;
      }
      const wait = end - performance.now();
      if (wait > 0) await sleep(wait);
      const now = processCpuMs(pid);
      seg.cpuMs = now.sched - cpu.sched;
      seg.tickMs = now.ticks - cpu.ticks;
      cpu = now;
      segments.push(seg);
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  return segments;
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/** A B B A A B B A ...: each pair of adjacent segments has one of each, half of them in either order. */
const abba = (n: number): Side[] => Array.from({ length: n }, (_, k) => ((k + 1) % 4 < 2 ? 'plain' : 'templated'));
const refusedOf = (segs: Segment[]) =>
  segs.reduce((n, s) => n + Object.entries(s.statuses).reduce((m, [st, c]) => m + (st === '200' ? 0 : c), 0), 0);

export async function templateFigures(
  ctx: PartContext,
  jobs: JobsContext,
  svc: ServiceHandle,
  batchRuns: number,
): Promise<TemplatesFigures> {
  const created = await call<{ id: string }>(svc, 'POST', '/templates', { ...ORDER_TEMPLATE, alias: tag('order-') });
  if (created.status !== 200 || !created.body?.id)
    throw new Error(`POST /templates: ${created.status} ${created.error}`);
  const templateId = created.body.id;
  const variables = orderVariables(7);
  // The plain send carries exactly what the template renders: the same email, written out.
  const path = `/templates/${templateId}/render`;
  const r = await call<{ subject: string; html: string; text: string }>(svc, 'POST', path, { variables });
  if (r.status !== 200 || !r.body) throw new Error(`POST /templates/:id/render: ${r.status} ${r.error}`);
  const { from, to, tags } = EMAIL_REQUEST;
  const plainBody = { from, to, tags, subject: r.body.subject, html: r.body.html, text: r.body.text };
  const templatedBody = { from, to, tags, template: { id: templateId, variables } };
  await sameEmail(svc, plainBody, templatedBody);

  const pid = svc.pid;
  const idle0 = processCpuMs(pid);
  await sleep(1_000);
  const idleMsPerSec = round(processCpuMs(pid).sched - idle0.sched, 1);

  const plan = abba(WARMUP_SEGMENTS + SEGMENTS);
  const w = ctx.window();
  const segments = await pacedStream(
    new URL(`${svc.baseUrl}/v1/mail/emails`),
    { 'content-type': 'application/json', authorization: `Bearer ${svc.apiKey}` },
    { plain: JSON.stringify(plainBody), templated: JSON.stringify(templatedBody) },
    plan,
    TEMPLATES_RATE,
    pid,
  );
  const cpu = w.stop();
  // The warm-up segments (JIT, the compiled-template cache, the pool's connections) are not counted.
  const measured = segments.slice(WARMUP_SEGMENTS);
  const perEmail = (s: Segment) => (s.sent > 0 ? s.cpuMs / s.sent : NaN);
  const pairs: TemplatesFigures['pairs'] = [];
  for (let k = 0; k + 1 < measured.length; k += 2) {
    const [a, b] = [measured[k]!, measured[k + 1]!];
    const [p, t] = a.side === 'plain' ? [a, b] : [b, a];
    pairs.push({
      order: `${a.side} then ${b.side}`,
      plainMs: round(perEmail(p)),
      templatedMs: round(perEmail(t)),
      ratio: round(perEmail(t) / perEmail(p)),
    });
  }
  const sideOf = (side: Side): TemplateSide => {
    const segs = measured.filter((s) => s.side === side);
    const accepted = segs.reduce((n, s) => n + (s.statuses['200'] ?? 0), 0);
    const sent = segs.reduce((n, s) => n + s.sent, 0);
    return {
      accepted,
      cpuMsPerEmail: round(segs.reduce((x, s) => x + s.cpuMs, 0) / sent),
      tickMsPerEmail: round(segs.reduce((x, s) => x + s.tickMs, 0) / sent),
      latencyMs: percentiles(segs.flatMap((s) => s.latencies)),
    };
  };
  const plain = sideOf('plain');
  const templated = sideOf('templated');
  const refused = refusedOf(measured);
  const ratio = round(median(pairs.map((p) => p.ratio)));
  const seconds = (SEGMENTS * SEGMENT_MS) / 2000;

  for (const [side, figures] of [
    ['plain', plain],
    ['templated', templated],
  ] as const) {
    const segs = measured.filter((s) => s.side === side);
    const refusedHere = refusedOf(segs);
    ctx.addServiceRow({
      key: `templates-${side}`,
      what:
        side === 'plain'
          ? `service: POST /emails at ${TEMPLATES_RATE}/s, an order email written out (${r.body.html.length} B html)`
          : `service: POST /emails at ${TEMPLATES_RATE}/s, the same email from a template (5 lines in {{#each}})`,
      value: Math.round(figures.accepted / seconds),
      unit: '200/s',
      p50: figures.latencyMs.p50,
      p99: figures.latencyMs.p99,
      notes: [
        `${segs.length} one-second segments, ${figures.accepted} accepted; API process CPU per email: ${figures.cpuMsPerEmail} ms ` +
          `(segments: ${segs.map((s) => round(perEmail(s), 2)).join(', ')}; from 10 ms ticks: ${figures.tickMsPerEmail} ms)`,
        ...(refusedHere > 0 ? [`non-200 answers: ${JSON.stringify(segs.map((s) => s.statuses))}`] : []),
      ],
      detail: { segments: segs.map(({ latencies: _l, ...s }) => s) },
    });
  }
  ctx.addRow({
    key: 'templates-cpu-ratio',
    what: 'service: API process CPU per accepted email, templated / plain (median of the pairs)',
    value: ratio,
    unit: 'ratio',
    cpu,
    cpuUnits: { count: plain.accepted + templated.accepted, per: 'email (both sides, warm-up included)' },
    notes: [
      `${pairs.length} pairs of adjacent one-second segments at ${TEMPLATES_RATE}/s, after ${WARMUP_SEGMENTS} s of warm-up; ` +
        `ms per email, plain vs templated: ${pairs.map((p) => `${p.plainMs} vs ${p.templatedMs} = ${p.ratio}`).join('; ')}`,
      `all segments together: ${templated.cpuMsPerEmail} / ${plain.cpuMsPerEmail} = ${round(templated.cpuMsPerEmail / plain.cpuMsPerEmail)} ` +
        `(10 ms ticks: ${round(templated.tickMsPerEmail / plain.tickMsPerEmail)}); the API process idle: ${idleMsPerSec} ms/s, ` +
        `${round(idleMsPerSec / TEMPLATES_RATE)} ms per email at this rate, in both sides alike`,
    ],
  });

  const figures: TemplatesFigures = {
    rate: TEMPLATES_RATE,
    pairs,
    ratio,
    plain,
    templated,
    refused,
    idleMsPerSec,
    htmlBytes: r.body.html.length,
  };
  if (ctx.remaining() < 15_000) {
    ctx.log(`skipping the templated batch figure: ${(ctx.remaining() / 1000).toFixed(0)} s left in the budget`);
    return figures;
  }
  // As the plain batch figure (all-in-one-service.ts): once the sink is quiet. The fixed-rate sends above are
  // near what a 2-core machine a third as fast delivers, and batches started behind their backlog measured it
  // (session 28: the first five of 20 took 1.9-3.0 s, the rest 0.4-1.1 s).
  const quietFrom = performance.now();
  const quietCapMs = ctx.planned(30_000);
  await untilSinkQuiet(ctx, quietCapMs);
  ctx.log(
    `templated batches: ${batchRuns} batches of ${BATCH_SIZE} templated items, one at a time, after waiting ` +
      `${((performance.now() - quietFrom) / 1000).toFixed(1)} s (at most ${(quietCapMs / 1000).toFixed(0)}) for the sink to go quiet`,
  );
  figures.batch = await batchLatency(jobs, svc, batchRuns, BATCH_SIZE, {
    key: 'templates-batch',
    what: (size) => `service: batch of ${size} templated items (own variables each), POST -> last message at sink`,
    item: (prefix, i) => ({
      from,
      to,
      tags,
      template: { id: templateId, variables: orderVariables(i, `${prefix} ${i} `) },
    }),
  });
  return figures;
}

/** The templated send is stored as the plain one: the same subject, html and text (else the two sides compare nothing). */
async function sameEmail(
  svc: ServiceHandle,
  plainBody: Record<string, unknown>,
  templatedBody: unknown,
): Promise<void> {
  const sent = await call<{ id: string }>(svc, 'POST', '/emails', templatedBody);
  if (sent.status !== 200 || !sent.body) throw new Error(`templated POST /emails: ${sent.status} ${sent.error}`);
  const stored = await call<Record<string, unknown>>(svc, 'GET', `/emails/${sent.body.id}`);
  for (const field of ['subject', 'html', 'text'])
    if (stored.body?.[field] !== plainBody[field])
      throw new Error(
        `the templated email's ${field} differs from the rendered template's: the CPU figure would compare two emails`,
      );
}
