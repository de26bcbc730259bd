import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createWebhooksRepo } from '../../src/db/index.js';
import { sealedContext } from '../../src/domain/sealed-values.js';
import { createLogger } from '../../src/logger.js';
import { startMailer, type Mailer } from '../../src/main.js';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { sealUnbound } from '../helpers/legacy-sealing.js';
import { stackEnv, startStack, type Stack } from '../helpers/stack.js';
import { keyBoxOf, trackingKeyOf } from '../helpers/stack-secrets.js';

/**
 * Data at rest (issue 22, item 7): the secrets kept in PostgreSQL (webhook secrets, the tracking key behind
 * tracking links and report tokens, DKIM private keys) are sealed under the installation's encryption key and
 * bound to their row, an installation that stored them in clear is sealed at its next start without changing
 * them, and the data dir and what the service writes in it are its owner's only.
 */
// The built-in catcher (no SMTP_URL), so that caught mail is written into the data dir.
const ENV = { SMTP_URL: '', MAILER_CATCHER_PORT: '0' };
// Subscribed to complaints only: nothing these tests send is posted to it.
const HOOK_URL = 'https://93.184.215.14/hooks/mail';
let stack: Stack;
/** The process started again on the stack's database and data dir (the upgrade). */
let again: Mailer | undefined;

beforeAll(async () => {
  stack = await startStack(ENV);
});
afterAll(async () => {
  await again?.stop();
  await stack.stop();
});

const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o777;
const createHook = async () =>
  (
    await admin<{ id: string; secret: string }>(stack, 'POST', `/accounts/${stack.accountId}/webhooks`, {
      url: HOOK_URL,
      events: ['complaint'],
    })
  ).body;
const storedHook = async (id: string) =>
  (
    await stack.mailer.sql<
      { secret: string; previous_secret: string | null }[]
    >`select secret, previous_secret from webhooks where id = ${id}`
  )[0]!;
const storedSetting = async (name: string) =>
  (await stack.mailer.sql<{ value: string }[]>`select value from settings where name = ${name}`)[0]?.value;

describe('secrets in the database', () => {
  it('a webhook secret is stored sealed for its own row: not the clear value, and copied into another row it does not open', async () => {
    const box = await keyBoxOf(stack.mailer);
    const a = await createHook();
    const b = await createHook();
    const stored = await storedHook(a.id);
    expect(a.secret).toMatch(/^whsec_/);
    expect(stored.secret).toMatch(new RegExp(`^kb2\\.${box.keyId}\\.`));
    expect(stored.secret).not.toContain(a.secret.slice('whsec_'.length, 20));
    expect(box.open(stored.secret, sealedContext.webhookSecret(a.id))).toBe(a.secret);

    // A's sealed secret put into B's row: B's secret cannot be read (nothing would be signed with A's secret).
    await stack.mailer.sql`update webhooks set secret = ${stored.secret} where id = ${b.id}`;
    const repo = createWebhooksRepo(stack.mailer.sql, box);
    await expect(repo.get(b.id)).rejects.toThrow(/failed authentication for webhooks\.secret\/wh_/);
    expect((await repo.get(a.id))?.secret).toBe(a.secret);
    await stack.mailer.sql`delete from webhooks where id = ${b.id}`;

    // A rotation keeps both sealed; the previous one still opens for its row.
    const rotated = (await admin<{ secret: string }>(stack, 'POST', `/webhooks/${a.id}/rotate-secret`, {})).body;
    const after = await storedHook(a.id);
    expect(after.previous_secret).toBe(stored.secret);
    expect(box.open(after.secret, sealedContext.webhookSecret(a.id))).toBe(rotated.secret);
  });

  it('the tracking key (tracking links and report tokens) is stored sealed; the key opened from it signs links the service takes', async () => {
    const stored = await storedSetting('tracking_key');
    const key = await trackingKeyOf(stack.mailer);
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(stored).toMatch(/^kb2\./);
    expect(stored).not.toContain(key);
    // Sealed for its name: the same value under another setting's name does not open.
    await expect(
      (async () => (await keyBoxOf(stack.mailer)).open(stored!, sealedContext.setting('other')))(),
    ).rejects.toThrow(/failed authentication/);
  });

  it("records the encryption key's fingerprint (its key id, not the key)", async () => {
    const box = await keyBoxOf(stack.mailer);
    expect(await storedSetting('encryption_key_fingerprint')).toBe(box.keyId);
  });
});

describe('the data dir', () => {
  it('is 0700, and the key and caught mail in it 0600', async () => {
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ to: ['reader@example.net'] }),
    });
    expect(res.status).toBe(200);
    const mailDir = path.join(stack.dataDir, 'mail');
    const [eml] = await eventually(async () => {
      const files = (await fs.readdir(mailDir).catch(() => [])).filter((f) => f.endsWith('.eml'));
      return files.length > 0 ? files : undefined;
    });
    expect(await modeOf(stack.dataDir)).toBe(0o700);
    expect(await modeOf(mailDir)).toBe(0o700);
    expect(await modeOf(path.join(mailDir, eml!))).toBe(0o600);
    expect(await modeOf(path.join(stack.dataDir, 'encryption-key'))).toBe(0o600);
  });
});

describe('an installation that stored its secrets in clear (an earlier version)', () => {
  it('is sealed at its next start, values unchanged; a data dir open to others is made 0700', async () => {
    const sql = stack.mailer.sql;
    const box = await keyBoxOf(stack.mailer);
    // What the earlier version left: a clear tracking key and webhook secrets, and DKIM keys sealed unbound (kb1).
    const hook = await createHook();
    const clearSecret = 'whsec_clearsecretmadebyanearlierversion0000000=';
    const clearPrevious = 'whsec_clearpreviousmadebyanearlierversion00000=';
    const clearTrackingKey = 'clear-tracking-key-of-an-earlier-version-0123';
    await sql`update webhooks set secret = ${clearSecret}, previous_secret = ${clearPrevious}, previous_secret_until = now() + interval '1 hour' where id = ${hook.id}`;
    await sql`update settings set value = ${clearTrackingKey} where name = 'tracking_key'`;
    const [dkim] = await sql<{ id: string; private_key_sealed: string }[]>`
      select k.id, k.private_key_sealed from dkim_keys k join domains d on d.id = k.domain_id where d.name = 'example.com' and k.status = 'active'`;
    const pem = box.open(dkim!.private_key_sealed, sealedContext.dkimPrivateKey(dkim!.id));
    const encryptionKey = Buffer.from(
      (await fs.readFile(path.join(stack.dataDir, 'encryption-key'), 'utf8')).trim(),
      'hex',
    );
    await sql`update dkim_keys set private_key_sealed = ${sealUnbound(encryptionKey, pem)} where id = ${dkim!.id}`;
    await stack.stop();
    // As an earlier version made it.
    await fs.chmod(stack.dataDir, 0o755);

    const env = stackEnv(stack.databaseUrl, '', stack.taskQueue, stack.dataDir, ENV);
    again = await startMailer(loadConfig(env), { logger: createLogger('fatal', 'test'), env: process.env });
    const [row] = await again.sql<
      { secret: string; previous_secret: string }[]
    >`select secret, previous_secret from webhooks where id = ${hook.id}`;
    expect(row!.secret).toMatch(/^kb2\./);
    expect(row!.previous_secret).toMatch(/^kb2\./);
    expect(box.open(row!.secret, sealedContext.webhookSecret(hook.id))).toBe(clearSecret);
    expect(box.open(row!.previous_secret, sealedContext.webhookSecret(hook.id))).toBe(clearPrevious);
    const [tracking] = await again.sql<{ value: string }[]>`select value from settings where name = 'tracking_key'`;
    expect(tracking!.value).toMatch(/^kb2\./);
    expect(await trackingKeyOf(again)).toBe(clearTrackingKey);
    const [resealed] = await again.sql<
      { private_key_sealed: string }[]
    >`select private_key_sealed from dkim_keys where id = ${dkim!.id}`;
    expect(resealed!.private_key_sealed).toMatch(/^kb2\./);
    expect(box.open(resealed!.private_key_sealed, sealedContext.dkimPrivateKey(dkim!.id))).toBe(pem);
    expect(await modeOf(stack.dataDir)).toBe(0o700);
  });
});
