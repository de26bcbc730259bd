import { describe, expect, it } from 'vitest';
import { addDomain, admin, createAccount, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();
const adminCall = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.admin}${path}`, { token: ADMIN_TOKEN, ...(body !== undefined ? { body } : {}) });

describe('accounts', () => {
  it('POST /accounts creates a healthy account with quota 100', async () => {
    const res = await admin(stack, 'POST', '/accounts', { name: 'Acme Ltd' });
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acc_[0-9a-z]{26}$/),
      name: 'Acme Ltd',
      status: 'healthy',
      daily_quota: 100,
      created_at: expect.stringMatching(ISO),
      // A repeated field is always shown: empty where the answer has no rates.
      streams: [],
    });
  });

  it('POST /accounts without a name is 400', async () => {
    const res = await adminCall('POST', '/accounts', {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining('name') });
  });

  it('GET /accounts/:id adds sent_today, bounce_rate and complaint_rate as JSON numbers, per stream too, and compliance', async () => {
    const s = await createSender(stack, 'stats', 'stats.example');
    const before = await admin(stack, 'GET', `/accounts/${s.accountId}`);
    expect(before.body).toEqual({
      id: s.accountId,
      name: 'stats',
      status: 'healthy',
      daily_quota: 1000,
      created_at: expect.stringMatching(ISO),
      sent_today: 0,
      bounce_rate: 0,
      complaint_rate: 0,
      // Each stream's health-window figures, and the last 7 days' per stream against the 0.3 % line.
      streams: [
        { stream: 'transactional', sent: 0, bounce_rate: 0, complaint_rate: 0 },
        { stream: 'broadcast', sent: 0, bounce_rate: 0, complaint_rate: 0 },
      ],
      compliance: {
        window_days: 7,
        complaint_rate_limit: 0.003,
        streams: ['transactional', 'broadcast'].map((stream) => ({
          stream,
          sent: 0,
          complained: 0,
          unsubscribed: 0,
          complaint_rate: 0,
          unsubscribe_rate: 0,
          over_complaint_limit: false,
        })),
      },
    });
    for (let i = 0; i < 2; i++) {
      expect(
        (await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'a@stats.example' }) }))
          .status,
      ).toBe(200);
    }
    const after = await admin(stack, 'GET', `/accounts/${s.accountId}`);
    expect(after.body.sent_today).toBe(2);
    expect(typeof after.body.bounce_rate).toBe('number');
    expect(typeof after.body.complaint_rate).toBe('number');
  });

  it('PATCH /accounts/:id sets the status and the quota', async () => {
    const id = await createAccount(stack, 'patch me');
    const paused = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'paused' });
    expect(paused.body).toMatchObject({ id, status: 'paused', daily_quota: 100 });
    const quota = await admin(stack, 'PATCH', `/accounts/${id}`, { daily_quota: 250 });
    expect(quota.body).toMatchObject({ id, status: 'paused', daily_quota: 250 });
    const both = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'healthy', daily_quota: 7 });
    expect(both.body).toMatchObject({ id, status: 'healthy', daily_quota: 7 });
    const review = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'review' });
    expect(review.body.status).toBe('review');
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body).toMatchObject({ status: 'review', daily_quota: 7 });
  });

  it('PATCH /accounts/:id refuses an unknown status or a negative quota', async () => {
    const id = await createAccount(stack, 'bad patch');
    const status = await adminCall('PATCH', `/accounts/${id}`, { status: 'deleted' });
    expect(status.status).toBe(400);
    expect(status.body).toEqual({ error: 'validation error', message: expect.stringContaining('status') });
    const quota = await adminCall('PATCH', `/accounts/${id}`, { daily_quota: -1 });
    expect(quota.status).toBe(400);
    expect(quota.body).toEqual({ error: 'validation error', message: expect.stringContaining('daily_quota') });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body).toMatchObject({ status: 'healthy', daily_quota: 100 });
  });

  it('GET /accounts lists every account, the seeded default included', async () => {
    const id = await createAccount(stack, 'listed');
    const res = await admin<{ accounts: { id: string; name: string; daily_quota: number }[] }>(
      stack,
      'GET',
      '/accounts',
    );
    const ids = res.body.accounts.map((a) => a.id);
    expect(ids).toContain(id);
    expect(ids).toContain(stack.accountId);
    expect(res.body.accounts.find((a) => a.id === stack.accountId)).toMatchObject({
      name: 'default',
      daily_quota: 1000,
    });
  });
});

describe('domains', () => {
  it('POST /accounts/:id/domains answers the domain with its DNS records, unverified', async () => {
    const id = await createAccount(stack, 'domains');
    const res = await admin(stack, 'POST', `/accounts/${id}/domains`, { name: 'Mail.Domains.Example' });
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^dom_[0-9a-z]{26}$/),
      name: 'mail.domains.example',
      verified: false,
      open_tracking: false,
      click_tracking: false,
    });
    const records = res.body.dns_records as {
      type: string;
      name: string;
      value: string;
      zone_value: string;
      purpose: string;
      status: string;
    }[];
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r).toEqual({
        type: expect.any(String),
        name: expect.any(String),
        value: expect.any(String),
        // The value as a zone file takes it: TXT quoted (split at 255 characters), MX as it is.
        zone_value: r.type === 'TXT' ? expect.stringMatching(/^".*"$/) : r.value,
        purpose: expect.any(String),
        status: 'pending',
      });
    }
    expect(records.some((r) => r.type === 'TXT' && r.name.endsWith('mail.domains.example'))).toBe(true);
  });

  it('refuses an invalid domain name and a duplicate', async () => {
    const id = await createAccount(stack, 'bad domains');
    const bad = await adminCall('POST', `/accounts/${id}/domains`, { name: 'not a domain' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'validation error', message: expect.stringContaining('name') });
    await admin(stack, 'POST', `/accounts/${id}/domains`, { name: 'dup.example' });
    const dup = await adminCall('POST', `/accounts/${id}/domains`, { name: 'dup.example' });
    expect(dup.status).toBe(400);
  });

  it('GET /accounts/:id/domains lists them', async () => {
    const id = await createAccount(stack, 'two domains');
    const a = await addDomain(stack, id, 'one.example', false);
    const b = await addDomain(stack, id, 'two.example', true);
    const res = await admin<{ domains: { id: string; name: string; verified: boolean; dns_records: unknown[] }[] }>(
      stack,
      'GET',
      `/accounts/${id}/domains`,
    );
    expect(res.body.domains.map((d) => [d.id, d.name, d.verified]).sort()).toEqual(
      [
        [a, 'one.example', false],
        [b, 'two.example', true],
      ].sort(),
    );
    for (const d of res.body.domains) expect(d.dns_records.length).toBeGreaterThan(0);
  });

  it('verify without force stays unverified when the DNS record does not exist; force verifies; the first raises the quota 100 -> 1,000', async () => {
    const id = await createAccount(stack, 'verify');
    const domainId = await addDomain(stack, id, 'verify-me.example', false);
    const plain = await admin(stack, 'POST', `/domains/${domainId}/verify`, {});
    expect(plain.body).toMatchObject({ id: domainId, verified: false });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(100);

    const forced = await admin(stack, 'POST', `/domains/${domainId}/verify`, { force: true });
    expect(forced.body).toMatchObject({ id: domainId, name: 'verify-me.example', verified: true });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(1000);

    // Verifying again is harmless; a second verified domain does not raise further.
    expect((await admin(stack, 'POST', `/domains/${domainId}/verify`, {})).body.verified).toBe(true);
    await addDomain(stack, id, 'second-verified.example', true);
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(1000);
  });

  it('the first verification keeps a quota an operator already set', async () => {
    const id = await createAccount(stack, 'operator quota');
    await admin(stack, 'PATCH', `/accounts/${id}`, { daily_quota: 5 });
    await addDomain(stack, id, 'operator.example', true);
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(5);
  });

  it('a newly verified domain can be sent from at once', async () => {
    const id = await createAccount(stack, 'sends after verify');
    const domainId = await addDomain(stack, id, 'later.example', false);
    const { key } = await createKey(stack, id, 'send_only');
    expect(
      (await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@later.example' }) })).status,
    ).toBe(403);
    await admin(stack, 'POST', `/domains/${domainId}/verify`, { force: true });
    expect(
      (await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@later.example' }) })).status,
    ).toBe(200);
  });
});

describe('domains', () => {
  it('PATCH /domains/:id turns open and click tracking on and off, each on its own', async () => {
    const id = await createAccount(stack, 'tracking');
    const domainId = await addDomain(stack, id, 'track.example', false);
    const open = await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: true });
    expect(open.body).toMatchObject({ id: domainId, open_tracking: true, click_tracking: false });
    const click = await admin(stack, 'PATCH', `/domains/${domainId}`, { click_tracking: true });
    expect(click.body).toMatchObject({ open_tracking: true, click_tracking: true });
    const off = await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: false });
    expect(off.body).toMatchObject({ open_tracking: false, click_tracking: true });
    const listed = await admin<{ domains: { id: string; open_tracking: boolean; click_tracking: boolean }[] }>(
      stack,
      'GET',
      `/accounts/${id}/domains`,
    );
    expect(listed.body.domains.find((d) => d.id === domainId)).toMatchObject({
      open_tracking: false,
      click_tracking: true,
    });
  });
});
