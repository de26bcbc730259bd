import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrackingRepo } from '../../src/db/index.js';
import { event } from '../../src/domain/events.js';
import { newId } from '../../src/ids.js';
import { createLinkTracker, type LinkTracker } from '../../src/delivery/message/tracking.js';
import { MAX_TRACKING_EVENTS_PER_EMAIL } from '../../src/services/tracking-service.js';
import { admin } from '../helpers/admin-fixtures.js';
import { bearer, loadClients, ok, rpc } from '../helpers/grpc-client.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { trackingKeyOf } from '../helpers/stack-secrets.js';

/**
 * Replayed pixel and link URLs against the real service, database and webhook delivery: repeats are
 * counted, but only the first hit of a window (and no more than the cap per email) makes an event and a
 * webhook POST, however many hits arrive at once.
 */

const REPLAYS = 1000;
/** How long a webhook that should not come is given to come anyway, after the one that should. */
const QUIET_MS = 1500;

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

interface Tracked {
  stack: Stack;
  tracker: LinkTracker;
  /** The webhook receiver's path of this stack's default account (subscribed to open and click). */
  hookPath: string;
}

async function startTracked(name: string, env: Record<string, string> = {}): Promise<Tracked> {
  const stack = await startStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1', ...env });
  const tracker = createLinkTracker({ baseUrl: stack.mailer.restUrl!, key: await trackingKeyOf(stack.mailer) });
  const hookPath = `/${name}`;
  await admin(stack, 'POST', `/accounts/${stack.accountId}/webhooks`, {
    url: `${receiver.url}${hookPath}`,
    events: ['open', 'click'],
  });
  return { stack, tracker, hookPath };
}

async function sendEmail(stack: Stack): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
  expect(res.status).toBe(200);
  return res.body.id;
}

const eventsOf = (stack: Stack, emailId: string, type: 'open' | 'click') =>
  stack.mailer.sql<
    { id: string; data: Record<string, unknown> }[]
  >`select id, data from events where email_id = ${emailId} and type = ${type} order by id`;

/** Webhook deliveries queued for the email's events: what will ever be POSTed for it. */
const queuedHooks = async (stack: Stack, emailId: string) =>
  (
    await stack.mailer.sql<{ n: number }[]>`
    select count(*)::int as n from webhook_deliveries d join events e on e.id = d.event_id where e.email_id = ${emailId}`
  )[0]!.n;

type Detail = { open_count: number; click_count: number; events: { type: string }[] };
const detail = async (stack: Stack, emailId: string) => (await admin<Detail>(stack, 'GET', `/emails/${emailId}`)).body;

/** The counts once every hit has been written (the pixel answers after at most 500 ms, recorded or not). */
const countsReach = (stack: Stack, emailId: string, opens: number, clicks: number) =>
  eventually(
    async () => {
      const d = await detail(stack, emailId);
      return d.open_count === opens && d.click_count === clicks ? d : undefined;
    },
    60_000,
    100,
  );

/** The webhook POSTs of an email at a path, after waiting for `n` and then QUIET_MS for any more. */
async function hooksOf(path: string, emailId: string, n: number) {
  const of = () => receiver.on(path).filter((h) => h.body.email?.id === emailId);
  await eventually(async () => of().length >= n, 30_000);
  await new Promise((r) => setTimeout(r, QUIET_MS));
  return of();
}

const GET = (url: string) => fetch(url, { redirect: 'manual', headers: { 'user-agent': 'Replay/1.0' } });

// The stack with the default window, shared by both of its describe blocks (the 2-second window has its own).
let t: Tracked;
beforeAll(async () => {
  t = await startTracked('default-window');
});
afterAll(async () => {
  await t?.stack.stop();
});

describe('with the default window (10 minutes)', () => {
  it(`${REPLAYS} concurrent fetches of the pixel make one open event and one webhook POST, and count ${REPLAYS}`, async () => {
    const id = await sendEmail(t.stack);
    const url = t.tracker.pixelUrl(id);
    const answers = await Promise.all(
      Array.from({ length: REPLAYS }, async () => {
        const res = await GET(url);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(REPLAYS);

    const d = await countsReach(t.stack, id, REPLAYS, 0);
    expect(d.events.filter((e) => e.type === 'open')).toHaveLength(1);
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(1);
    expect(await queuedHooks(t.stack, id)).toBe(1);
    const hooks = await hooksOf(t.hookPath, id, 1);
    expect(hooks.map((h) => h.body.event)).toEqual(['open']);
  });

  it(`${REPLAYS} concurrent fetches of a link make one click event and one webhook POST, and every one redirects; another link has its own event`, async () => {
    const id = await sendEmail(t.stack);
    const link = 'https://example.org/flood?x=1';
    const url = t.tracker.clickUrl(id, link);
    const answers = await Promise.all(
      Array.from({ length: REPLAYS }, async () => {
        const res = await GET(url);
        await res.arrayBuffer();
        return `${res.status} ${res.headers.get('location')}`;
      }),
    );
    expect(new Set(answers)).toEqual(new Set([`302 ${link}`]));
    await countsReach(t.stack, id, 0, REPLAYS);

    expect((await GET(t.tracker.clickUrl(id, 'https://example.org/other'))).status).toBe(302);
    await countsReach(t.stack, id, 0, REPLAYS + 1);
    const clicks = await eventsOf(t.stack, id, 'click');
    expect(clicks.map((c) => c.data.link)).toEqual([link, 'https://example.org/other']);
    expect(await queuedHooks(t.stack, id)).toBe(2);
    const hooks = await hooksOf(t.hookPath, id, 2);
    expect(hooks.map((h) => h.body.data.link).sort()).toEqual([link, 'https://example.org/other'].sort());

    const { admin: grpcAdmin } = loadClients(t.stack.grpcAddress);
    try {
      const viaGrpc = ok(await rpc(grpcAdmin, 'GetEmailDetail', { id }, bearer(ADMIN_TOKEN)));
      expect(viaGrpc).toMatchObject({ open_count: 0, click_count: REPLAYS + 1 });
    } finally {
      grpcAdmin.close();
    }
  });

  it(`no more than ${MAX_TRACKING_EVENTS_PER_EMAIL} events per email, even from distinct links at once; the rest are counted`, async () => {
    const id = await sendEmail(t.stack);
    const links = Array.from({ length: MAX_TRACKING_EVENTS_PER_EMAIL + 50 }, (_, i) => `https://example.org/l/${i}`);
    const answers = await Promise.all(links.map(async (link) => (await GET(t.tracker.clickUrl(id, link))).status));
    expect(answers.filter((s) => s === 302)).toHaveLength(links.length);
    // The cap is reached: a first open is counted, and makes no event either.
    expect((await GET(t.tracker.pixelUrl(id))).status).toBe(200);

    await countsReach(t.stack, id, 1, links.length);
    expect(await eventsOf(t.stack, id, 'click')).toHaveLength(MAX_TRACKING_EVENTS_PER_EMAIL);
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(0);
    expect(await queuedHooks(t.stack, id)).toBe(MAX_TRACKING_EVENTS_PER_EMAIL);
  });
});

// HEAD, statements straight to the database, and an email never fetched.
describe('with the default window (10 minutes)', () => {
  it('a HEAD is answered like a GET but counts nothing', async () => {
    const id = await sendEmail(t.stack);
    const pixel = await fetch(t.tracker.pixelUrl(id), { method: 'HEAD' });
    expect(pixel.status).toBe(200);
    expect(pixel.headers.get('content-type')).toBe('image/gif');
    const link = await fetch(t.tracker.clickUrl(id, 'https://example.org/head'), {
      method: 'HEAD',
      redirect: 'manual',
    });
    expect(link.status).toBe(302);
    expect(link.headers.get('location')).toBe('https://example.org/head');
    const forged = await fetch(`${t.stack.mailer.restUrl}/t/c/forged`, { method: 'HEAD', redirect: 'manual' });
    expect(forged.status).toBe(404);

    // A GET after them is still the first open: HEAD took no window.
    expect((await GET(t.tracker.pixelUrl(id))).status).toBe(200);
    await countsReach(t.stack, id, 1, 0);
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(1);
    expect(await eventsOf(t.stack, id, 'click')).toHaveLength(0);
  });

  // One process folds concurrent hits of a target into one statement at a time; several API processes do not
  // share that, so the database alone must decide. Statements straight to it, as many processes would send.
  it('the database decides alone: concurrent statements for one target record one event, for distinct links no more than the cap', async () => {
    const repo = createTrackingRepo(t.stack.mailer.sql);
    const rules = { windowSeconds: 600, maxEventsPerEmail: MAX_TRACKING_EVENTS_PER_EMAIL };
    const data = (at: Date) => ({ timestamp: at.toISOString(), ip_address: '192.0.2.1', user_agent: 'direct' });
    const id = await sendEmail(t.stack);
    const opens = await Promise.all(
      Array.from({ length: 300 }, () => {
        const at = new Date();
        return repo.hit({ emailId: id, event: event(newId('event'), 'open', at, data(at)) }, rules, 2);
      }),
    );
    expect(opens.filter((o) => o === 'recorded')).toHaveLength(1);
    expect(opens.filter((o) => o === 'counted')).toHaveLength(299);
    const links = Array.from(
      { length: MAX_TRACKING_EVENTS_PER_EMAIL + 50 },
      (_, i) => `https://example.org/direct/${i}`,
    );
    const clicks = await Promise.all(
      links.map((link) => {
        const at = new Date();
        return repo.hit({ emailId: id, link, event: event(newId('event'), 'click', at, { ...data(at), link }) }, rules);
      }),
    );
    // The open took one of the email's events.
    expect(clicks.filter((o) => o === 'recorded')).toHaveLength(MAX_TRACKING_EVENTS_PER_EMAIL - 1);
    expect(await repo.counts(id)).toEqual({ openCount: 600, clickCount: links.length });
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(1);
    expect(await eventsOf(t.stack, id, 'click')).toHaveLength(MAX_TRACKING_EVENTS_PER_EMAIL - 1);
    expect(await queuedHooks(t.stack, id)).toBe(MAX_TRACKING_EVENTS_PER_EMAIL);

    const at = new Date();
    expect(
      await repo.hit(
        { emailId: 'em_01jzzzzzzzzzzzzzzzzzzzzzzz', event: event(newId('event'), 'open', at, data(at)) },
        rules,
      ),
    ).toBe('unknown_email');
  });

  it('an email never fetched shows zero counts', async () => {
    const id = await sendEmail(t.stack);
    expect(await detail(t.stack, id)).toMatchObject({ open_count: 0, click_count: 0 });
  });
});

describe('with a 2-second window', () => {
  const WINDOW_SECONDS = 2;
  let t: Tracked;
  beforeAll(async () => {
    t = await startTracked('short-window', { MAILER_TRACKING_EVENT_WINDOW_SECONDS: String(WINDOW_SECONDS) });
  });
  afterAll(async () => {
    await t?.stack.stop();
  });

  it('a repeat within the window is counted only; the first after it is recorded again, with its webhook', async () => {
    const id = await sendEmail(t.stack);
    const pixel = t.tracker.pixelUrl(id);
    const link = t.tracker.clickUrl(id, 'https://example.org/again');
    const started = Date.now();
    for (const url of [pixel, pixel, link, link]) await (await GET(url)).arrayBuffer();
    await countsReach(t.stack, id, 2, 2);
    // Only meaningful if the repeats came within the window.
    expect(Date.now() - started).toBeLessThan(WINDOW_SECONDS * 1000);
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(1);
    expect(await eventsOf(t.stack, id, 'click')).toHaveLength(1);

    await new Promise((r) => setTimeout(r, WINDOW_SECONDS * 1000 + 200));
    for (const url of [pixel, pixel, link]) await (await GET(url)).arrayBuffer();
    await countsReach(t.stack, id, 4, 3);
    expect(await eventsOf(t.stack, id, 'open')).toHaveLength(2);
    expect(await eventsOf(t.stack, id, 'click')).toHaveLength(2);
    const hooks = await hooksOf(t.hookPath, id, 4);
    expect(hooks.map((h) => h.body.event).sort()).toEqual(['click', 'click', 'open', 'open']);
  });
});
