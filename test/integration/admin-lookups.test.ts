import { beforeAll, describe, expect, it } from 'vitest';
import { createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();
const adminCall = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.admin}${path}`, { token: ADMIN_TOKEN, ...(body !== undefined ? { body } : {}) });
beforeAll(async () => {
  stack.sink.refuseRecipient = (address) => (address.startsWith('bounce@') ? '550 5.1.1 no such user' : undefined);
});

describe('404 for unknown ids', () => {
  it.each([
    ['GET', '/accounts/acc_unknown', undefined, 'account acc_unknown not found'],
    ['PATCH', '/accounts/acc_unknown', { status: 'paused' }, 'account acc_unknown not found'],
    ['POST', '/accounts/acc_unknown/domains', { name: 'x.example' }, 'account acc_unknown not found'],
    ['GET', '/accounts/acc_unknown/domains', undefined, 'account acc_unknown not found'],
    ['POST', '/accounts/acc_unknown/api-keys', { name: 'k', permission: 'all' }, 'account acc_unknown not found'],
    ['GET', '/accounts/acc_unknown/api-keys', undefined, 'account acc_unknown not found'],
    [
      'POST',
      '/accounts/acc_unknown/webhooks',
      { url: 'https://93.184.215.14/h', events: ['send'] },
      'account acc_unknown not found',
    ],
    ['GET', '/accounts/acc_unknown/webhooks', undefined, 'account acc_unknown not found'],
    ['POST', '/domains/dom_unknown/verify', { force: true }, 'domain dom_unknown not found'],
    ['PATCH', '/domains/dom_unknown', { open_tracking: true }, 'domain dom_unknown not found'],
    ['DELETE', '/api-keys/key_unknown', undefined, 'API key key_unknown not found'],
    ['DELETE', '/webhooks/wh_unknown', undefined, 'webhook wh_unknown not found'],
  ] as const)('%s %s', async (method, path, body, message) => {
    const res = await adminCall(method, path, body);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found', message });
  });
});

/** Three emails to list, one to a refused recipient; their ids once every outcome is known (two delivered, one bounced). */
async function sendListed(
  key: string,
  list: (query: string) => Promise<{ body: { total: number } }>,
): Promise<string[]> {
  const ids: string[] = [];
  const recipients = ['a@example.net', 'bounce@example.net', 'c@example.net'];
  for (const [i, to] of recipients.entries()) {
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'l@list.example', to: [to], subject: `list ${i}` }),
    });
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
  await eventually(async () => (await list('?status=pending')).body.total === 0);
  return ids;
}

describe('GET /emails: filters, pagination, newest first', () => {
  let s: Awaited<ReturnType<typeof createSender>>;
  const ids: string[] = [];
  const list = (query = '') =>
    call<{ data: Record<string, unknown>[]; total: number }>('GET', `${stack.api}/emails${query}`, { token: s.key });

  beforeAll(async () => {
    s = await createSender(stack, 'lister', 'list.example');
    ids.push(...(await sendListed(s.key, list)));
  });

  it('lists every email of the account, newest first, with the list item fields only', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.data.map((e) => e.id)).toEqual([...ids].reverse());
    expect(res.body.data[0]).toEqual({
      id: ids[2],
      from: 'l@list.example',
      to: ['c@example.net'],
      subject: 'list 2',
      status: 'delivered',
      created_at: expect.stringMatching(ISO),
      stream: 'transactional',
    });
    const created = res.body.data.map((e) => Date.parse(e.created_at as string));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
  });

  it('filters by status', async () => {
    const delivered = await list('?status=delivered');
    expect(delivered.body).toEqual({
      data: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[0] })],
      total: 2,
    });
    const bounced = await list('?status=bounced');
    expect(bounced.body).toEqual({ data: [expect.objectContaining({ id: ids[1], status: 'bounced' })], total: 1 });
    for (const status of ['pending', 'sent', 'complained']) {
      expect((await list(`?status=${status}`)).body).toEqual({ data: [], total: 0 });
    }
  });

  it('filters by job_type and job_id', async () => {
    expect((await list('?job_type=direct')).body.total).toBe(3);
    expect((await list('?job_type=batch')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_type=scheduled')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_id=bat_01hzzzzzzzzzzzzzzzzzzzzzzz')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_type=direct&status=bounced')).body.total).toBe(1);
  });

  it('paginates with page and page_size; total is the count of all matches', async () => {
    const p1 = await list('?page_size=2');
    expect(p1.body.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.total).toBe(3);
    const p2 = await list('?page=2&page_size=2');
    expect(p2.body.data.map((e) => e.id)).toEqual([ids[0]]);
    expect(p2.body.total).toBe(3);
    const p3 = await list('?page=3&page_size=2');
    expect(p3.body).toEqual({ data: [], total: 3 });
    const one = await list('?page=2&page_size=1&status=delivered');
    expect(one.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], total: 2 });
  });

  it('defaults to page 1 with 20 items', async () => {
    for (let i = 0; i < 20; i++) {
      expect(
        (
          await call('POST', `${stack.api}/emails`, {
            token: s.key,
            body: validEmail({ from: 'l@list.example', subject: `more ${i}` }),
          })
        ).status,
      ).toBe(200);
    }
    const res = await list();
    expect(res.body.total).toBe(23);
    expect(res.body.data).toHaveLength(20);
    expect(res.body.data[0]!.subject).toBe('more 19');
    const page2 = await list('?page=2');
    expect(page2.body.data.map((e) => e.id)).toEqual([ids[2], ids[1], ids[0]]);
  });

  it('shows the detail of a bounced email with its status', async () => {
    const res = await call('GET', `${stack.api}/emails/${ids[1]}`, { token: s.key });
    expect(res.body).toMatchObject({
      id: ids[1],
      status: 'bounced',
      to: ['bounce@example.net'],
      job_type: 'direct',
      job_id: '',
      mal_status: 'healthy',
    });
  });
});
