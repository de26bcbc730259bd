import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, expectValidationError, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * GET /v1/mail/events against the real service: events made by real sends (Temporal, an SMTP server),
 * paged with the cursor, filtered, confined to the key's account, and equal to the webhook bodies.
 */
const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

type FeedEvent = {
  id: string;
  event: string;
  timestamp: string;
  email: Record<string, unknown>;
  data: Record<string, unknown>;
};
type Page = { events: FeedEvent[]; next_cursor: string };

async function feed(key: string, query = ''): Promise<Page> {
  const res = await call<Page>('GET', `${stack.api}/events${query}`, { token: key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Sends `n` emails and waits until the feed holds their send and delivery events. */
async function sendAndSettle(key: string, from: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from, subject: `feed ${i}` }),
    });
    expect(res.status, res.text).toBe(200);
    ids.push(res.body.id);
  }
  await eventually(async () => {
    const all = await feed(key, '?limit=1000');
    return ids.every((id) => all.events.filter((e) => e.email.id === id).length === 2);
  });
  return ids;
}

/** Every event after `after`, page by page of `limit`, and the pages' sizes. */
async function readAll(
  key: string,
  limit: number,
  extra = '',
  after = '',
): Promise<{ events: FeedEvent[]; sizes: number[]; cursor: string }> {
  const events: FeedEvent[] = [];
  const sizes: number[] = [];
  let cursor = after;
  for (;;) {
    const page = await feed(key, `?limit=${limit}&after=${cursor}${extra}`);
    sizes.push(page.events.length);
    events.push(...page.events);
    if (page.events.length === 0) {
      expect(page.next_cursor).toBe(cursor);
      return { events, sizes, cursor };
    }
    expect(page.next_cursor).not.toBe(cursor);
    cursor = page.next_cursor;
  }
}

describe('events API', () => {
  it("pages oldest first with the cursor, filters by type, and shows no other account's events", async () => {
    const a = await createSender(stack, 'feed-a', 'feed-a.example');
    const b = await createSender(stack, 'feed-b', 'feed-b.example');
    const sentA = await sendAndSettle(a.key, 'a@feed-a.example', 3);
    const sentB = await sendAndSettle(b.key, 'b@feed-b.example', 1);

    const paged = await readAll(a.key, 4);
    expect(paged.sizes).toEqual([4, 2, 0]);
    expect(new Set(paged.events.map((e) => e.id)).size).toBe(6);
    expect(paged.events.map((e) => e.email.id).sort()).toEqual([...sentA, ...sentA].sort());
    for (const id of sentA) {
      expect(paged.events.filter((e) => e.email.id === id).map((e) => e.event)).toEqual(['send', 'delivery']);
    }
    expect(paged.events.every((e) => /^evt_[0-9a-z]{26}$/.test(e.id))).toBe(true);

    const deliveries = await readAll(a.key, 2, '&type=delivery');
    expect(deliveries.events.map((e) => e.event)).toEqual(['delivery', 'delivery', 'delivery']);
    expect(deliveries.events.map((e) => e.id)).toEqual(
      paged.events.filter((e) => e.event === 'delivery').map((e) => e.id),
    );

    const readOnly = await createKey(stack, b.accountId, 'read_only');
    const ofB = await readAll(readOnly.key, 1000);
    expect(ofB.events.map((e) => e.email.id)).toEqual([sentB[0], sentB[0]]);
    // A cursor of another account's feed reads only the caller's own events after that position.
    const cursorOfA = (await feed(a.key, '?limit=1')).next_cursor;
    expect(
      (await feed(b.key, `?after=${cursorOfA}`)).events.map((e) => e.email.id).every((id) => id === sentB[0]),
    ).toBe(true);

    // The cursor of the last page is where polling resumes: a new event, and only it, follows it.
    const [later] = await sendAndSettle(a.key, 'a@feed-a.example', 1);
    const rest = await readAll(a.key, 100, '', paged.cursor);
    expect(rest.events.map((e) => [e.email.id, e.event])).toEqual([
      [later, 'send'],
      [later, 'delivery'],
    ]);
  });

  it("refuses a bad limit, type or cursor with the spec's 400", async () => {
    const cases: [string, RegExp][] = [
      ['?limit=1001', /limit must be from 1 to 1000/],
      ['?limit=-1', /limit must be from 1 to 1000/],
      [
        '?type=sent',
        /type must be one of send, delivery, bounce, complaint, reject, open, click, unsubscribe, inbound, reply; got "sent"/,
      ],
      ['?after=evt_01jbadcursor', /after must be empty or a next_cursor/],
      ['?after=99999999999999999999-01jv0000000000000000000000', /after must be empty or a next_cursor/],
      ['?after=029-20ury97053emu6rh4sxwmotmnz', /after must be empty or a next_cursor/],
    ];
    for (const [query, message] of cases) {
      expectValidationError(await call('GET', `${stack.api}/events${query}`, { token: stack.apiKey }), query, message);
    }
    expect((await call('GET', `${stack.api}/events`)).status).toBe(401);
    // Any cursor of the documented shape is a position: the start, or past every event there is.
    const start = await feed(stack.apiKey, '?after=0-00000000000000000000000000&limit=1');
    expect(start.events.length).toBeLessThanOrEqual(1);
    const end = await feed(stack.apiKey, '?after=9999999999999999999-zzzzzzzzzzzzzzzzzzzzzzzzzz');
    expect(end).toEqual({ events: [], next_cursor: '9999999999999999999-zzzzzzzzzzzzzzzzzzzzzzzzzz' });
  });
});

describe('events API', () => {
  it('an event is the very body its webhook sent, with the same id', async () => {
    const s = await createSender(stack, 'feed-hook', 'feed-hook.example');
    await admin(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
      url: `${receiver.url}/feed-hook`,
      events: ['send', 'delivery'],
    });
    await sendAndSettle(s.key, 'Feed Hook <hook@feed-hook.example>', 1);
    const hooks = await eventually(async () =>
      receiver.on('/feed-hook').length >= 2 ? receiver.on('/feed-hook') : undefined,
    );
    const { events } = await feed(s.key);
    expect(events).toHaveLength(2);
    for (const e of events) {
      const hook = hooks.find((h) => h.body.id === e.id);
      expect(hook, `webhook of ${e.id}`).toBeDefined();
      expect(JSON.parse(hook!.rawBody)).toEqual(e);
    }
  });

  it('holds back events behind a transaction still open, so a cursor never skips one that commits late', async () => {
    const s = await createSender(stack, 'feed-late', 'feed-late.example');
    const [first] = await sendAndSettle(s.key, 'l@feed-late.example', 1);
    const sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    try {
      const lateId = newId('event');
      let inserted!: () => void;
      const isInserted = new Promise<void>((r) => {
        inserted = r;
      });
      // The late event has the smaller id and begins first, but commits after the next email's events.
      const open = sql.begin(async (tx) => {
        await tx`insert into events (id, email_id, account_id, type, data) values (${lateId}, ${first!}, ${s.accountId}, 'open', '{}')`;
        inserted();
        await released;
      });
      await isInserted;
      const before = (await feed(s.key)).next_cursor;
      const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
        token: s.key,
        body: validEmail({ from: 'l@feed-late.example' }),
      });
      expect(res.status).toBe(200);
      // Its events are committed, but the feed does not pass the open transaction's position.
      await eventually(async () => (await sql`select 1 from events where email_id = ${res.body.id}`).length === 2);
      expect((await feed(s.key, `?after=${before}`)).events).toEqual([]);
      release();
      await open;
      const after = await eventually(async () => {
        const page = await feed(s.key, `?after=${before}`);
        return page.events.length === 3 ? page.events : undefined;
      });
      expect(after.map((e) => e.id)[0]).toBe(lateId);
      expect(after.slice(1).map((e) => [e.email.id, e.event])).toEqual([
        [res.body.id, 'send'],
        [res.body.id, 'delivery'],
      ]);
    } finally {
      release();
      await sql.end({ timeout: 5 });
    }
  });
});
