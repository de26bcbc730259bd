import crypto from 'node:crypto';
import { startDnsServer } from '../../test/helpers/dns-server.js';
import { benchDkimKey, type DkimKey } from '../lib/dkim-key.js';
import { onCleanup } from '../lib/lifecycle.js';
import nodemailer, { type Transporter } from 'nodemailer';
import type { PartContext } from '../lib/context.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import { vmRssKiB } from '../lib/memory.js';
import { admin, type ServiceHandle } from '../lib/service.js';
import { startWebhookRecorder, type WebhookRecorder } from '../lib/webhook-recorder.js';
import { SENDER_DOMAIN } from '../lib/payload.js';

/**
 * Inbound mail (issue 26, point 9; bench/README.md, "Inbound"): the service as an MX. A route `*@in.<domain>` of
 * the default account and a webhook subscribed to `inbound`; then, from this process, nodemailer (8 pooled
 * connections, STARTTLS as a sending MTA would; each message DKIM-signed by the sending domain, whose SPF, DKIM
 * key and DMARC policy a DNS server in this process publishes, so the service judges each as a receiver would) offers INBOUND_RATE messages a second of about 50 KB (text,
 * html and a small attachment) for INBOUND_SECONDS, open loop: message i is due at start + i / rate, and its
 * latency runs from then to its `inbound` webhook's arrival, so a service falling behind shows in the figure
 * rather than slowing the offer. The service's RSS is sampled each second (flat: the last 5 s against the
 * 5 s before half-time). Then, quiet, one message of LARGE_MESSAGE_BYTES (a binary attachment, base64): the service's
 * peak RSS while it is received and parsed, against its RSS just before.
 */

export const INBOUND_RATE = Number(process.env.BENCH_INBOUND_RATE ?? 100);
export const INBOUND_SECONDS = Number(process.env.BENCH_INBOUND_SECONDS ?? 30);
/** Each event at the webhook receiver within this, p99. */
export const INBOUND_P99_TARGET_MS = 2000;
/** The large message's RSS rise at most this times its size. */
export const LARGE_RSS_FACTOR = 2;
/**
 * "Memory flat": the last 5 s's RSS at most this much above the 5 s before half-time. Not against the first 5 s,
 * when the heap is still growing to what the load needs (about 50 MiB more here, the same after 30 s and 75 s).
 */
export const FLAT_RSS_GROWTH = 0.1;
/** Just under the 25 MiB default cap once base64 and headers are added. */
const LARGE_ATTACHMENT_BYTES = 18 * 1024 * 1024;

export interface InboundFigures {
  rate: number;
  seconds: number;
  offered: number;
  accepted: number;
  refused: number;
  arrived: number;
  badSignatures: number;
  latencyMs: Percentiles;
  messageBytes: number;
  rssMiB: { first5s: number; middle5s: number; last5s: number; max: number };
  large: { bytes: number; accepted: boolean; baseMiB: number; peakMiB: number; riseMiB: number; error?: string };
}

/** The domain the inbound messages come from. */
const SENDING_DOMAIN = 'sender.example.net';

/**
 * The sending domain's DNS, for the service's MAILER_DNS_SERVERS: SPF allowing loopback, the DKIM key the
 * messages are signed with, a DMARC policy. Without it every check of every message asks the system resolver,
 * which (offline here) answers NXDOMAIN after a round trip each, and the figure measures those.
 */
export async function startInboundZone(): Promise<{ servers: string; dkim: DkimKey }> {
  const dns = await startDnsServer();
  onCleanup('stop the inbound DNS server', () => dns.close());
  const dkim = benchDkimKey(SENDING_DOMAIN);
  const publicKey = crypto.createPublicKey(dkim.privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
  dns.set(SENDING_DOMAIN, 'TXT', ['v=spf1 ip4:127.0.0.0/8 -all']);
  dns.set(`${dkim.keySelector}._domainkey.${SENDING_DOMAIN}`, 'TXT', [`v=DKIM1; k=rsa; p=${publicKey}`]);
  dns.set(`_dmarc.${SENDING_DOMAIN}`, 'TXT', ['v=DMARC1; p=reject']);
  return { servers: dns.servers, dkim };
}

/** About 50 KB: 20 KB of text, the same as html, and a 7.5 KB attachment (10 KB in base64). */
function message(i: number, runId: string, domain: string) {
  const words = 'the quick brown fox jumps over the lazy dog and then some more words follow'.split(' ');
  const line = (n: number) => Array.from({ length: 12 }, (_, k) => words[(n + k) % words.length]).join(' ');
  const text = Array.from({ length: 250 }, (_, n) => line(n + i)).join('\n');
  return {
    from: `Customer ${i} <customer${i}@${SENDING_DOMAIN}>`,
    to: `support+${i}@in.${domain}`,
    subject: `${runId} inbound ${i}`,
    text,
    html: `<p>${text.replaceAll('\n', '</p><p>')}</p>`,
    attachments: [{ filename: `note-${i}.bin`, content: crypto.randomBytes(7500) }],
  };
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

/** A message as a sending MTA hands it over: built, DKIM-signed, with its envelope. */
interface Prebuilt {
  subject: string;
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/**
 * Messages built and DKIM-signed before the clock starts. Building and signing one costs the bench about 3.5 ms
 * of CPU (docs/benchmark.md, "Session 25"): done while sending, a third of a core at 100/s went to the load
 * generator on the two cores the service runs on, work the remote MTAs of a real deployment do on their own
 * machines. The service receives the same bytes either way.
 */
async function prebuild(dkim: DkimKey, messages: { subject: string; [field: string]: unknown }[]): Promise<Prebuilt[]> {
  const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, dkim });
  const built: Prebuilt[] = [];
  for (const m of messages) {
    const info = await builder.sendMail(m);
    built.push({ subject: m.subject, envelope: info.envelope as Prebuilt['envelope'], raw: info.message as Buffer });
  }
  return built;
}

export async function inboundFigures(ctx: PartContext, service: ServiceHandle, dkim: DkimKey): Promise<InboundFigures> {
  if (!service.inboundUrl) throw new Error('the service did not print its inbound listener URL');
  const runId = `in${Date.now().toString(36)}`;
  const domain = SENDER_DOMAIN;
  await admin(service, 'POST', `/accounts/${service.accountId}/inbound/routes`, { match: `*@in.${domain}` });
  const secrets = new Map<string, string>();
  const recorder = await startWebhookRecorder(secrets);
  const hook = await admin<{ secret: string }>(service, 'POST', `/accounts/${service.accountId}/webhooks`, {
    url: `${recorder.url}/ok`,
    events: ['inbound'],
  });
  secrets.set('/ok', hook.secret);

  const { hostname, port } = new URL(service.inboundUrl);
  const transport = nodemailer.createTransport({
    host: hostname,
    port: Number(port),
    pool: true,
    maxConnections: 8,
    maxMessages: Infinity,
    // The listener's certificate is self-signed in the bench's data dir; a sending MTA uses STARTTLS opportunistically.
    tls: { rejectUnauthorized: false },
    name: `mta.${SENDING_DOMAIN}`,
  });
  try {
    const offered = Math.round(INBOUND_RATE * INBOUND_SECONDS);
    const built: (Prebuilt | undefined)[] = await prebuild(
      dkim,
      Array.from({ length: offered }, (_, i) => message(i, runId, domain)),
    );
    const dueAt = new Map<string, number>();
    let accepted = 0;
    let refused = 0;
    let messageBytes = 0;
    const rss: { at: number; kib: number }[] = [];
    const w = ctx.window();
    const t0 = Date.now();
    const sampler = setInterval(() => {
      void vmRssKiB(service.pid).then(
        (kib) => rss.push({ at: Date.now() - t0, kib }),
        () => {},
      );
    }, 1000);
    const sends: Promise<void>[] = [];
    for (let i = 0; i < offered; i++) {
      const due = t0 + (i * 1000) / INBOUND_RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const m = built[i]!;
      // Sent once: the buffer is let go for the GC as it goes out.
      built[i] = undefined;
      dueAt.set(m.subject, due);
      sends.push(
        transport.sendMail({ envelope: m.envelope, raw: m.raw }).then(
          () => {
            accepted += 1;
            if (i === 0) messageBytes = m.raw.length;
          },
          () => {
            refused += 1;
          },
        ),
      );
    }
    await Promise.all(sends);
    // Up to 20 s more for the last events.
    const deadline = Date.now() + 20_000;
    const arrivedCount = () => recorder.hooks.filter((h) => h.subject.startsWith(`${runId} `)).length;
    while (arrivedCount() < accepted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    clearInterval(sampler);
    const cpu = w.stop();
    const mine = recorder.hooks.filter((h) => h.event === 'inbound' && h.subject.startsWith(`${runId} `));
    const latencies = mine.map((h) => h.arrivedAt - (dueAt.get(h.subject) ?? h.arrivedAt));
    const latencyMs = percentiles(latencies);
    const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
    const runMs = INBOUND_SECONDS * 1000;
    const rssMiB = {
      first5s: mib(avg(rss.filter((s) => s.at <= 5000).map((s) => s.kib))),
      middle5s: mib(avg(rss.filter((s) => s.at > runMs / 2 - 5000 && s.at <= runMs / 2).map((s) => s.kib))),
      last5s: mib(avg(rss.filter((s) => s.at > runMs - 5000 && s.at <= runMs).map((s) => s.kib))),
      max: mib(Math.max(...rss.map((s) => s.kib))),
    };
    ctx.addServiceRow({
      key: 'inbound-webhook-latency',
      what: `inbound: ${INBOUND_RATE}/s of ${(messageBytes / 1000).toFixed(0)} KB for ${INBOUND_SECONDS} s, due -> inbound webhook`,
      value: latencyMs.p99,
      unit: 'ms',
      p50: latencyMs.p50,
      p99: latencyMs.p99,
      cpu,
      cpuUnits: { count: Math.max(accepted, 1), per: 'message' },
      notes: [
        `${accepted} of ${offered} accepted (${refused} refused), ${mine.length} inbound events arrived`,
        `service RSS ${rssMiB.first5s} MiB (first 5 s), ${rssMiB.middle5s} MiB (5 s before half-time), ${rssMiB.last5s} MiB (last 5 s), max ${rssMiB.max} MiB`,
      ],
    });

    const large = await largeMessage(service, transport, dkim, runId, domain, recorder);
    ctx.addServiceRow({
      key: 'inbound-large-rss',
      what: `inbound: one ${(large.bytes / 1024 / 1024).toFixed(1)} MiB message, the service's RSS rise`,
      value: large.riseMiB,
      unit: 'MiB',
      notes: [
        `${large.accepted ? 'accepted' : `NOT accepted: ${large.error ?? ''}`}; RSS ${large.baseMiB} -> peak ${large.peakMiB} MiB`,
      ],
    });
    return {
      rate: INBOUND_RATE,
      seconds: INBOUND_SECONDS,
      offered,
      accepted,
      refused,
      arrived: mine.length,
      badSignatures: mine.filter((h) => !h.signatureOk).length,
      latencyMs,
      messageBytes,
      rssMiB,
      large,
    };
  } finally {
    transport.close();
    await recorder.close();
  }
}

/** One message just under the size cap, sampled for the service's RSS every 20 ms until its event arrives. */
async function largeMessage(
  service: ServiceHandle,
  transport: Transporter,
  dkim: DkimKey,
  runId: string,
  domain: string,
  recorder: WebhookRecorder,
): Promise<InboundFigures['large']> {
  const subject = `${runId} large`;
  const [m] = await prebuild(dkim, [
    {
      from: `big@${SENDING_DOMAIN}`,
      to: `archive@in.${domain}`,
      subject,
      text: 'A large attachment.',
      attachments: [{ filename: 'large.bin', content: crypto.randomBytes(LARGE_ATTACHMENT_BYTES) }],
    },
  ]);
  await new Promise((r) => setTimeout(r, 2000));
  const base = await vmRssKiB(service.pid);
  let peak = base;
  const sampler = setInterval(() => {
    void vmRssKiB(service.pid).then(
      (kib) => (peak = Math.max(peak, kib)),
      () => {},
    );
  }, 20);
  let bytes = 0;
  let accepted = false;
  let error: string | undefined;
  try {
    await transport.sendMail({ envelope: m!.envelope, raw: m!.raw });
    bytes = m!.raw.length;
    accepted = true;
    const deadline = Date.now() + 15_000;
    while (!recorder.hooks.some((h) => h.subject === subject) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    clearInterval(sampler);
  }
  return {
    bytes: bytes || Math.ceil((LARGE_ATTACHMENT_BYTES * 4) / 3),
    accepted,
    baseMiB: mib(base),
    peakMiB: mib(peak),
    riseMiB: mib(peak - base),
    ...(error !== undefined ? { error } : {}),
  };
}
