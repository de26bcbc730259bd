import { setTimeout as sleep } from 'node:timers/promises';
import { EMAIL_REQUEST, SENDER_DOMAIN } from '../lib/payload.js';
import { admin, type ServiceHandle } from '../lib/service.js';
import { startWebhookRecorder, type WebhookRecorder } from '../lib/webhook-recorder.js';

/**
 * The webhook figures' load (bench/README.md, "Webhooks"): two accounts of their own with a `delivery`
 * webhook each, one on the recorder's `/ok`, one on its always-500 `/fail`; a warm-up, then open-loop
 * sends at a fixed rate on the first and a few emails on the second early in that load.
 */

/** How many emails go to the always-500 webhook. */
export const RETRY_EMAILS = 5;

export type HookAccount = Awaited<ReturnType<typeof accountWithWebhook>>;

export interface WebhookSetup {
  recorder: WebhookRecorder;
  ok: HookAccount;
  fail: HookAccount;
  /** Subject prefixes of the load's emails and of the always-500 account's. */
  prefix: string;
  failPrefix: string;
  /** Requests the recorder had before the load (the warm-up's): not counted. */
  counted: number;
}

export interface WebhookLoad {
  sent: Sent[];
  accepted: Sent[];
  failAccepted: number;
  /** Date.now() at the first send. */
  startedAt: number;
  seconds: number;
}

let runSeq = 0;

/** The recorder, the two accounts and the warm-up (not counted): the first webhook POSTs, the webhook workflow's code in the worker's cache. */
export async function setUpWebhooks(service: ServiceHandle): Promise<WebhookSetup> {
  const secrets = new Map<string, string>();
  const recorder = await startWebhookRecorder(secrets);
  const run = (++runSeq).toString(36);
  const ok = await accountWithWebhook(service, `bench webhooks ${run}`, `${recorder.url}/ok`, ['delivery']);
  const fail = await accountWithWebhook(service, `bench webhook retries ${run}`, `${recorder.url}/fail`, ['delivery']);
  secrets.set('/ok', ok.secret);
  secrets.set('/fail', fail.secret);
  await Promise.all(Array.from({ length: 10 }, (_, i) => sendOne(service, ok.apiKey, `[bench whw${run}] ${i}`)));
  const warmDeadline = performance.now() + 10_000;
  while (
    recorder.hooks.filter((h) => h.subject.startsWith(`[bench whw${run}]`)).length < 10 &&
    performance.now() < warmDeadline
  )
    await sleep(50);
  await sleep(300);
  return {
    recorder,
    ok,
    fail,
    prefix: `[bench wh${run}]`,
    failPrefix: `[bench whf${run}]`,
    counted: recorder.hooks.length,
  };
}

/** The load, and the always-failing account's few emails early in it (all 4 attempts, 7 s, fall inside it). */
export async function sendWebhookLoad(
  service: ServiceHandle,
  setup: WebhookSetup,
  rate: number,
  durationS: number,
): Promise<WebhookLoad> {
  const startedAt = Date.now();
  const failSends = Promise.all(
    Array.from({ length: RETRY_EMAILS }, (_, i) =>
      sleep(500 + i * 300).then(() => sendOne(service, setup.fail.apiKey, `${setup.failPrefix} ${i}`)),
    ),
  );
  const sent = await paced(rate, durationS * 1000, (i) => sendOne(service, setup.ok.apiKey, `${setup.prefix} ${i}`));
  const failSent = await failSends;
  return {
    sent,
    accepted: sent.filter((s) => s.status === 200),
    failAccepted: failSent.filter((s) => s.status === 200).length,
    startedAt,
    seconds: (Date.now() - startedAt) / 1000,
  };
}

export type Deliveries = {
  deliveries: { id: string; status: string; attempts: { attempt: number; status_code: number }[] }[];
};

/** Until every accepted email has its webhook and every failing delivery is discarded (or the cap). */
export async function waitForWebhooks(
  service: ServiceHandle,
  setup: WebhookSetup,
  load: WebhookLoad,
  waitCapMs: number,
) {
  const acceptedSubjects = new Set(load.accepted.map((s) => s.subject));
  const waitCap = Math.max(3_000, waitCapMs);
  const waitStart = performance.now();
  let complete: boolean;
  for (;;) {
    const got = new Set(okHooks(setup).map((h) => h.subject));
    const allHooked = [...acceptedSubjects].every((s) => got.has(s));
    const discarded = (
      await admin<Deliveries>(service, 'GET', `/webhooks/${setup.fail.webhookId}/deliveries?status=discarded&limit=100`)
    ).deliveries;
    complete = allHooked && discarded.length >= load.failAccepted;
    if (complete || performance.now() - waitStart > waitCap) break;
    await sleep(250);
  }
  return { complete, waitCap, waitedS: (performance.now() - waitStart) / 1000 };
}

/** The counted requests to the `/ok` webhook. */
export const okHooks = (setup: WebhookSetup) =>
  setup.recorder.hooks.slice(setup.counted).filter((h) => h.path === '/ok');

/** An account of its own (unlimited quota, the bench's verified sender domain, a key) with a webhook. */
async function accountWithWebhook(service: ServiceHandle, name: string, url: string, events: string[]) {
  const account = await admin<{ id: string }>(service, 'POST', '/accounts', { name });
  await admin(service, 'PATCH', `/accounts/${account.id}`, { daily_quota: 100_000_000 });
  const d = await admin<{ id: string }>(service, 'POST', `/accounts/${account.id}/domains`, { name: SENDER_DOMAIN });
  await admin(service, 'POST', `/domains/${d.id}/verify`, { force: true });
  const key = await admin<{ key: string }>(service, 'POST', `/accounts/${account.id}/api-keys`, {
    name: 'bench',
    permission: 'all',
  });
  const hook = await admin<{ id: string; secret: string }>(service, 'POST', `/accounts/${account.id}/webhooks`, {
    url,
    events,
  });
  return { accountId: account.id, apiKey: key.key, webhookId: hook.id, secret: hook.secret };
}

export interface Sent {
  subject: string;
  /** Date.now() just before the request. */
  sentAt: number;
  status: number;
  ms: number;
  error?: string;
}

async function sendOne(service: ServiceHandle, apiKey: string, subject: string): Promise<Sent> {
  const t0 = performance.now();
  const sentAt = Date.now();
  try {
    const res = await fetch(`${service.baseUrl}/v1/mail/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...EMAIL_REQUEST, subject }),
    });
    const text = await res.text();
    return {
      subject,
      sentAt,
      status: res.status,
      ms: performance.now() - t0,
      ...(res.ok ? {} : { error: text.slice(0, 300) }),
    };
  } catch (err) {
    return { subject, sentAt, status: 0, ms: performance.now() - t0, error: (err as Error).message };
  }
}

/**
 * Open-loop sends at `rate` per second for `durationMs`: the i-th request goes at start + i / rate whether
 * the earlier ones have been answered or not (so a slow answer does not lower the rate).
 */
async function paced(rate: number, durationMs: number, fire: (i: number) => Promise<Sent>): Promise<Sent[]> {
  const n = Math.max(1, Math.round((rate * durationMs) / 1000));
  const t0 = performance.now();
  const all: Promise<Sent>[] = [];
  for (let i = 0; i < n; i += 1) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait >= 1) await sleep(wait);
    all.push(fire(i));
  }
  return Promise.all(all);
}
