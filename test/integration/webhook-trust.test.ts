import crypto from 'node:crypto';
import postgres from 'postgres';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealedContext } from '../../src/domain/sealed-values.js';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { standardWebhooksSecret } from '../../src/webhooks/standard-signature.js';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { keyBoxOf } from '../helpers/stack-secrets.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Webhooks a receiver can trust (issue 14), end to end through real deliveries to a real HTTP receiver:
 * Standard Webhooks headers checked by the reference library `standardwebhooks`, secret rotation with an
 * overlap, the auto-disable threshold (3 discards in a row here, no minimum duration) and bulk re-send.
 */
const stack = useStack({
  MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
  MAILER_WEBHOOK_DISABLE_AFTER_DISCARDS: '3',
  MAILER_WEBHOOK_DISABLE_AFTER_HOURS: '0',
});
let receiver: WebhookReceiver;
let sql: postgres.Sql;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await receiver?.close();
  await sql?.end();
});

type WebhookJson = {
  id: string;
  secret?: string;
  previous_secret_until?: string;
  disabled_at?: string;
  disabled_reason?: string;
};
type Deliveries = { deliveries: { id: string; status: string; discard_reason?: string; attempts: unknown[] }[] };

async function senderWithHook(name: string, events = ['delivery']) {
  const domain = `${name}.example`;
  const s = await createSender(stack, name, domain);
  const path = `/${name}`;
  const hook = await admin<WebhookJson>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
    url: `${receiver.url}${path}`,
    events,
  });
  return { ...s, domain, path, webhookId: hook.body.id, secret: hook.body.secret! };
}

async function send(key: string, domain: string, subject: string): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: key,
    body: validEmail({ from: `n@${domain}`, subject }),
  });
  expect(res.status).toBe(200);
  return res.body.id;
}

const waitHooks = (path: string, n: number, timeoutMs = 20_000) =>
  eventually(async () => (receiver.on(path).length >= n ? receiver.on(path) : undefined), timeoutMs, 20);

/** What the reference library says of a request as received, with the secret string exactly as given. */
function libraryVerifies(secret: string, hook: ReceivedHook): boolean {
  try {
    new Webhook(secret).verify(hook.rawBody, hook.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

const deliveriesOf = async (webhookId: string, query = '') =>
  (await admin<Deliveries>(stack, 'GET', `/webhooks/${webhookId}/deliveries${query}`)).body.deliveries;

describe('Standard Webhooks headers', () => {
  it('every delivery carries webhook-id/-timestamp/-signature that the reference library verifies with the secret as created', async () => {
    const s = await senderWithHook('stdhdr');
    expect(s.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await send(s.key, s.domain, 'standard');
    const [hook] = await waitHooks(s.path, 1);
    const h = hook!.headers;
    expect(h['webhook-id']).toBe(h['x-mail-delivery-id']);
    expect(h['webhook-timestamp']).toBe(h['x-mail-timestamp']);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(h).not.toHaveProperty('x-mail-signature-previous');
    expect(libraryVerifies(s.secret, hook!)).toBe(true);
    expect(new Webhook(s.secret).verify(hook!.rawBody, h as Record<string, string>)).toEqual(hook!.body);
    expect(verifyWebhookSignature({ secret: s.secret, headers: h, rawBody: hook!.rawBody })).toEqual({ ok: true });
    // Tampering is caught: another body, another id, another secret.
    expect(libraryVerifies(s.secret, { ...hook!, rawBody: hook!.rawBody.replace('standard', 'standarD') })).toBe(false);
    expect(libraryVerifies(s.secret, { ...hook!, headers: { ...h, 'webhook-id': 'whd_other' } })).toBe(false);
    expect(libraryVerifies(`whsec_${crypto.randomBytes(32).toString('base64')}`, hook!)).toBe(false);
  });

  it('a secret made before (whsec_<base64url>) keeps X-Mail-Signature as is; the library takes its standard-base64 spelling', async () => {
    const s = await senderWithHook('oldsecret');
    // An old-format secret with both url-safe characters, as generateWebhookSecret made them before.
    const bytes = Buffer.from(`${'\xfb\xff'.repeat(8)}${crypto.randomBytes(16).toString('latin1')}`, 'latin1');
    const old = `whsec_${bytes.toString('base64url')}`;
    expect(old).toMatch(/[-_]/);
    // Stored as every secret is: sealed for its webhook.
    const sealed = (await keyBoxOf(stack.mailer)).seal(old, sealedContext.webhookSecret(s.webhookId));
    await sql`update webhooks set secret = ${sealed} where id = ${s.webhookId}`;
    await send(s.key, s.domain, 'old secret');
    const [hook] = await waitHooks(s.path, 1);
    const independent = `sha256=${crypto
      .createHmac('sha256', old)
      .update(`${hook!.headers['x-mail-timestamp'] as string}.${hook!.rawBody}`)
      .digest('hex')}`;
    expect(hook!.headers['x-mail-signature']).toBe(independent);
    expect(standardWebhooksSecret(old)).toBe(`whsec_${bytes.toString('base64')}`.replace(/=+$/, ''));
    expect(libraryVerifies(standardWebhooksSecret(old), hook!)).toBe(true);
  });
});

describe('secret rotation', () => {
  it('during the overlap both secrets sign (library and X-Mail-Signature[-Previous]); after it only the new one', async () => {
    const s = await senderWithHook('rotate');
    const rotated = await admin<WebhookJson>(stack, 'POST', `/webhooks/${s.webhookId}/rotate-secret`, {
      overlap_seconds: 10,
    });
    const fresh = rotated.body.secret!;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(s.secret);
    const until = Date.parse(rotated.body.previous_secret_until!);
    expect(until - Date.now()).toBeGreaterThan(5_000);
    const [listed] = (await admin<{ webhooks: WebhookJson[] }>(stack, 'GET', `/accounts/${s.accountId}/webhooks`)).body
      .webhooks;
    expect(listed).toEqual(expect.objectContaining({ previous_secret_until: rotated.body.previous_secret_until }));
    expect(listed).not.toHaveProperty('secret');

    await send(s.key, s.domain, 'during overlap');
    const [during] = await waitHooks(s.path, 1);
    expect(Number(during!.headers['webhook-timestamp']) * 1000).toBeLessThan(until);
    expect((during!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(libraryVerifies(s.secret, during!)).toBe(true);
    expect(libraryVerifies(fresh, during!)).toBe(true);
    const xmail = (secret: string, h: ReceivedHook) =>
      verifyWebhookSignature({ secret, headers: h.headers, rawBody: h.rawBody }).ok;
    expect(xmail(fresh, during!)).toBe(true);
    expect(xmail(s.secret, during!)).toBe(true);
    expect(
      verifyWebhookSignature({
        secret: s.secret,
        headers: { ...during!.headers, 'x-mail-signature-previous': undefined },
        rawBody: during!.rawBody,
      }).ok,
    ).toBe(false);

    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now() + 200)));
    await send(s.key, s.domain, 'after overlap');
    const after = (await waitHooks(s.path, 2))[1]!;
    expect(after.headers).not.toHaveProperty('x-mail-signature-previous');
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(libraryVerifies(fresh, after)).toBe(true);
    expect(libraryVerifies(s.secret, after)).toBe(false);
    expect(xmail(fresh, after)).toBe(true);
    expect(xmail(s.secret, after)).toBe(false);
    const [relisted] = (await admin<{ webhooks: WebhookJson[] }>(stack, 'GET', `/accounts/${s.accountId}/webhooks`))
      .body.webhooks;
    expect(relisted).not.toHaveProperty('previous_secret_until');
  }, 60_000);

  it('Verify is signed like deliveries; overlap_seconds out of range is 400 and an unknown webhook 404', async () => {
    const s = await senderWithHook('rotverify');
    const fresh = (await admin<WebhookJson>(stack, 'POST', `/webhooks/${s.webhookId}/rotate-secret`, {})).body;
    expect(Date.parse(fresh.previous_secret_until!) - Date.now()).toBeGreaterThan(86_390_000);
    expect((await admin(stack, 'POST', `/webhooks/${s.webhookId}/verify`, {})).body).toEqual({
      success: true,
      status_code: 200,
    });
    const [test] = receiver.on(s.path);
    expect(libraryVerifies(s.secret, test!)).toBe(true);
    expect(libraryVerifies(fresh.secret!, test!)).toBe(true);
    const bad = await call('POST', `${stack.admin}/webhooks/${s.webhookId}/rotate-secret`, {
      token: ADMIN_TOKEN,
      body: { overlap_seconds: 604_801 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: 'validation error',
      message: 'overlap_seconds must be from 0 to 604800; got 604801',
    });
    const missing = await call('POST', `${stack.admin}/webhooks/wh_unknown/rotate-secret`, {
      token: ADMIN_TOKEN,
      body: {},
    });
    expect(missing.status).toBe(404);
  });
});

describe('auto-disable and bulk re-send', () => {
  it('3 deliveries discarded in a row disable the webhook; its new events are discarded unattempted; enabled, a bulk re-send sends all 4', async () => {
    const s = await senderWithHook('disable');
    let failing = true;
    receiver.respond = (h) => (h.path === s.path && failing ? { status: 503 } : { status: 200 });
    const started = new Date().toISOString();
    for (const n of [1, 2, 3]) await send(s.key, s.domain, `failing ${n}`);
    const disabled = await eventually(
      async () => {
        const [w] = (await admin<{ webhooks: WebhookJson[] }>(stack, 'GET', `/accounts/${s.accountId}/webhooks`)).body
          .webhooks;
        return w?.disabled_at ? w : undefined;
      },
      40_000,
      200,
    );
    expect(disabled.disabled_reason).toMatch(
      /^3 deliveries in a row discarded \(every attempt failed\) since \d{4}-\d\d-\d\dT/,
    );
    expect(receiver.on(s.path)).toHaveLength(12);

    await send(s.key, s.domain, 'while disabled');
    const skipped = await eventually(async () =>
      (await deliveriesOf(s.webhookId)).find((d) => d.discard_reason === 'webhook_disabled'),
    );
    expect(skipped).toMatchObject({ status: 'discarded', attempts: [] });
    expect((await deliveriesOf(s.webhookId, '?status=discarded')).map((d) => d.discard_reason).sort()).toEqual([
      'retries_exhausted',
      'retries_exhausted',
      'retries_exhausted',
      'webhook_disabled',
    ]);
    const refused = await call('POST', `${stack.admin}/webhooks/${s.webhookId}/resend`, {
      token: ADMIN_TOKEN,
      body: { from: started },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ message: expect.stringMatching(/is disabled .* enable it first$/) });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on(s.path)).toHaveLength(12);

    failing = false;
    const enabled = await admin<WebhookJson>(stack, 'POST', `/webhooks/${s.webhookId}/enable`, {});
    expect(enabled.body).not.toHaveProperty('disabled_at');
    expect(enabled.body).not.toHaveProperty('secret');
    const resent = await admin(stack, 'POST', `/webhooks/${s.webhookId}/resend`, {
      from: started,
      to: new Date().toISOString(),
    });
    expect(resent.body).toEqual({ queued: 4, has_more: false });
    const hooks = await waitHooks(s.path, 16);
    expect(
      hooks
        .slice(12)
        .map((h) => h.body.email!.subject)
        .sort(),
    ).toEqual(['failing 1', 'failing 2', 'failing 3', 'while disabled']);
    await eventually(async () =>
      (await deliveriesOf(s.webhookId)).every((d) => d.status === 'succeeded' && d.discard_reason === undefined),
    );
    receiver.respond = () => ({ status: 200 });
  }, 90_000);
});

describe('auto-disable and bulk re-send', () => {
  it('bulk re-send takes only the range, and checks its input', async () => {
    const s = await senderWithHook('bulkrange');
    await send(s.key, s.domain, 'first');
    await send(s.key, s.domain, 'second');
    await waitHooks(s.path, 2);
    const ids = await eventually(async () => {
      const ds = await deliveriesOf(s.webhookId);
      return ds.length === 2 && ds.every((d) => d.status === 'succeeded') ? ds.map((d) => d.id) : undefined;
    });
    // Both discarded, one in a range of its own (created_at set apart): only it is queued.
    await sql`update webhook_deliveries set status = 'discarded', discard_reason = 'retries_exhausted' where id in ${sql(ids)}`;
    await sql`update webhook_deliveries set created_at = '2020-01-01T00:00:00Z' where id = ${ids[0]!}`;
    const res = await admin(stack, 'POST', `/webhooks/${s.webhookId}/resend`, {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
    });
    expect(res.body).toEqual({ queued: 1, has_more: false });
    await waitHooks(s.path, 3);
    expect(receiver.on(s.path)[2]!.headers['x-mail-delivery-id']).toBe(ids[0]);
    expect(
      (
        await admin(stack, 'POST', `/webhooks/${s.webhookId}/resend`, {
          from: '2020-01-01T00:00:00Z',
          to: '2020-01-02T00:00:00Z',
        })
      ).body,
    ).toEqual({ queued: 0, has_more: false });
    for (const [body, message] of [
      [{}, /^from must be an ISO 8601 time/],
      [{ from: 'yesterday' }, /^from must be an ISO 8601 time/],
      [
        { from: '2020-01-02T00:00:00Z', to: '2020-01-01T00:00:00Z' },
        /^from \(2020-01-02T00:00:00Z\) must be before to/,
      ],
    ] as const) {
      const bad = await call('POST', `${stack.admin}/webhooks/${s.webhookId}/resend`, { token: ADMIN_TOKEN, body });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error: 'validation error', message: expect.stringMatching(message) });
    }
    expect(
      (
        await call('POST', `${stack.admin}/webhooks/wh_unknown/resend`, {
          token: ADMIN_TOKEN,
          body: { from: '2020-01-01T00:00:00Z' },
        })
      ).status,
    ).toBe(404);
  });
});
