import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDkimKeysRepo } from '../../src/db/index.js';
import { createDkimKeyring } from '../../src/delivery/dkim/dkim-keyring.js';
import { loadEncryptionKey } from '../../src/secrets/encryption-key.js';
import { createKeyBox } from '../../src/secrets/key-box.js';
import { dnsRecheckScheduleId } from '../../src/temporal/dns-recheck-schedule.js';
import { admin, createAccount, createKey } from '../helpers/admin-fixtures.js';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

interface DnsRecord {
  type: string;
  name: string;
  value: string;
  zone_value: string;
  purpose: string;
  status: string;
}
interface Domain {
  id: string;
  name: string;
  verified: boolean;
  dns_records: DnsRecord[];
  dns_checked_at: string;
  dns_failing_since: string;
}

const HOSTNAME = 'mx.mailer.test';
let zone: DnsServer;
const stack = useStack(async () => {
  zone = await startDnsServer();
  return { MAILER_DNS_SERVERS: zone.servers, MAILER_HOSTNAME: HOSTNAME };
});
afterAll(async () => zone?.close());

const statuses = (d: Domain) => d.dns_records.map((r) => `${r.purpose}:${r.status}`);
const find = (d: Domain, purpose: string) => d.dns_records.filter((r) => r.purpose === purpose);
const verify = async (id: string) => (await admin<Domain>(stack, 'POST', `/domains/${id}/verify`, {})).body;

/** Publishes records as the API lists them (all, or those of the given purposes). */
function publish(records: DnsRecord[], purposes?: string[]) {
  for (const r of records) {
    if (purposes && !purposes.includes(r.purpose)) continue;
    if (r.type === 'MX') {
      const [priority, exchange] = r.value.split(' ');
      zone.set(r.name, 'MX', [{ exchange: exchange!, priority: Number(priority) }]);
    } else zone.set(r.name, 'TXT', [r.value]);
  }
}

async function newDomain(name: string): Promise<{ accountId: string; domain: Domain }> {
  const accountId = await createAccount(stack, `acct ${name}`);
  const domain = (await admin<Domain>(stack, 'POST', `/accounts/${accountId}/domains`, { name })).body;
  return { accountId, domain };
}

/** The send path's keyring over the stack's database and encryption key (fresh: no cache). */
async function keyring(sql: postgres.Sql) {
  const box = createKeyBox((await loadEncryptionKey(undefined, stack.dataDir)).key);
  return createDkimKeyring({ lookup: createDkimKeysRepo(sql as never).sealedSigningKey, keyBox: box });
}

/** A small pool on the stack's database, for what the API does not show (the caller ends it). */
const db = () => postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });

describe('domain authentication against a real DNS server', () => {
  it('a new domain lists every record to publish, each pending, with its DKIM key; the private key is stored sealed only', async () => {
    const { domain } = await newDomain('fresh.example');
    expect(domain.dns_records.map((r) => [r.purpose, r.type, r.name, r.status])).toEqual([
      ['ownership', 'TXT', '_mailer.fresh.example', 'pending'],
      ['spf', 'TXT', 'fresh.example', 'pending'],
      ['dkim', 'TXT', expect.stringMatching(/^m\d{8}\._domainkey\.fresh\.example$/), 'pending'],
      ['return_path', 'MX', 'rp.fresh.example', 'pending'],
      ['return_path_spf', 'TXT', 'rp.fresh.example', 'pending'],
      ['dmarc', 'TXT', '_dmarc.fresh.example', 'pending'],
    ]);
    expect(find(domain, 'spf')[0]!.value).toBe(`v=spf1 a:${HOSTNAME} ~all`);
    expect(find(domain, 'return_path')[0]!.value).toBe(`10 ${HOSTNAME}`);
    expect(find(domain, 'dkim')[0]!.value).toMatch(
      /^v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA[A-Za-z0-9+/]+=*$/,
    );
    expect(domain).toMatchObject({ verified: false, dns_checked_at: '', dns_failing_since: '' });

    const sql = db();
    try {
      const [key] = await sql<
        { private_key_sealed: string; status: string }[]
      >`select private_key_sealed, status from dkim_keys where domain_id = ${domain.id}`;
      expect(key!.status).toBe('active');
      expect(key!.private_key_sealed).toMatch(/^kb2\./);
      expect(key!.private_key_sealed).not.toContain('PRIVATE KEY');
      const signing = await (
        await keyring(sql)
      ).signingKey(
        (await sql`select account_id from domains where id = ${domain.id}`)[0]!.account_id as string,
        'fresh.example',
      );
      expect(signing?.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      // No answer about the domain carries any of it.
      const listed = await call(
        'GET',
        `${stack.admin}/accounts/${(await sql`select account_id from domains where id = ${domain.id}`)[0]!.account_id}/domains`,
        { token: ADMIN_TOKEN },
      );
      for (const text of [JSON.stringify(domain), listed.text]) {
        expect(text).not.toContain('PRIVATE KEY');
        expect(text).not.toContain(key!.private_key_sealed.slice(0, 40));
        expect(text).not.toContain(signing!.privateKey.split('\n')[1]!);
      }
      // The seeded default domain got its key at start too.
      expect(
        (
          await sql`select count(*)::int as n from dkim_keys k join domains d on d.id = k.domain_id where d.name = 'example.com'`
        )[0]!.n,
      ).toBe(1);
    } finally {
      await sql.end();
    }
  });
});

/** A zone file's quoted character strings, read back by the test's own reader: `"a" "b"` -> ['a', 'b']. */
function characterStrings(zoneValue: string): string[] {
  expect(zoneValue).toMatch(/^"(?:[^"\\]|\\.)*"(?: "(?:[^"\\]|\\.)*")*$/);
  return [...zoneValue.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

describe('zone_value: the records as zone files and DNS providers take them', () => {
  it('gives a DKIM value over 255 characters as quoted 255-character strings, which verify the domain when served as they are', async () => {
    const { accountId, domain } = await newDomain('split.example');
    const dkim = find(domain, 'dkim')[0]!;
    expect(dkim.value.length).toBeGreaterThan(255);
    const dkimStrings = characterStrings(dkim.zone_value);
    expect(dkimStrings.map((c) => c.length)).toEqual([255, dkim.value.length - 255]);
    for (const r of domain.dns_records) {
      if (r.type !== 'TXT') {
        expect(r.zone_value, r.purpose).toBe(r.value);
        continue;
      }
      const strings = characterStrings(r.zone_value);
      expect(strings.join(''), r.purpose).toBe(r.value);
      for (const c of strings.slice(0, -1)) expect(c, r.purpose).toHaveLength(255);
      expect(strings.at(-1)!.length, r.purpose).toBeLessThanOrEqual(255);
      if (r.value.length <= 255) expect(r.zone_value, r.purpose).toBe(`"${r.value}"`);
    }
    // The public API (the account's own key) answers the same records.
    const { key } = await createKey(stack, accountId, 'all');
    const own = await call<Domain>('GET', `${stack.api}/domains/${domain.id}`, { token: key });
    expect(own.status, own.text).toBe(200);
    expect(own.body.dns_records).toEqual(domain.dns_records);

    // Published as a zone file would: each TXT record as exactly the character strings of its zone_value.
    for (const r of domain.dns_records) {
      if (r.type === 'MX') {
        const [priority, exchange] = r.value.split(' ');
        zone.set(r.name, 'MX', [{ exchange: exchange!, priority: Number(priority) }]);
      } else zone.set(r.name, 'TXT', [characterStrings(r.zone_value)]);
    }
    const checked = await verify(domain.id);
    expect(checked.verified).toBe(true);
    expect(statuses(checked)).toEqual(domain.dns_records.map((r) => `${r.purpose}:verified`));
  });
});

describe('domain authentication against a real DNS server', () => {
  it('verify looks every record up: verified, pending or failed as found; verified once ownership, SPF and DKIM check out', async () => {
    const { accountId, domain } = await newDomain('checked.example');
    publish(domain.dns_records, ['ownership']);
    // Two SPF records make SPF a permerror at receivers: failed, even with ours among them.
    zone.set('checked.example', 'TXT', [`v=spf1 a:${HOSTNAME} ~all`, 'v=spf1 mx -all']);
    let d = await verify(domain.id);
    expect(statuses(d)).toEqual([
      'ownership:verified',
      'spf:failed',
      'dkim:pending',
      'return_path:pending',
      'return_path_spf:pending',
      'dmarc:pending',
    ]);
    expect(d.verified).toBe(false);
    expect(d.dns_checked_at).toMatch(ISO);

    zone.remove('checked.example');
    zone.set('checked.example', 'TXT', [`v=spf1 include:_spf.other.test +a:${HOSTNAME.toUpperCase()} ~all`]);
    const dkim = find(d, 'dkim')[0]!;
    zone.set(dkim.name, 'TXT', ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnotours']);
    zone.set('rp.checked.example', 'MX', [{ exchange: 'elsewhere.test', priority: 10 }]);
    d = await verify(domain.id);
    expect(statuses(d)).toEqual([
      'ownership:verified',
      'spf:verified',
      'dkim:failed',
      'return_path:failed',
      'return_path_spf:pending',
      'dmarc:pending',
    ]);
    expect(d.verified).toBe(false);
    expect((await admin<{ daily_quota: number }>(stack, 'GET', `/accounts/${accountId}`)).body.daily_quota).toBe(100);

    zone.remove(dkim.name);
    publish(d.dns_records, ['dkim', 'return_path_spf', 'dmarc']);
    d = await verify(domain.id);
    expect(statuses(d)).toEqual([
      'ownership:verified',
      'spf:verified',
      'dkim:verified',
      'return_path:failed',
      'return_path_spf:verified',
      'dmarc:verified',
    ]);
    expect(d).toMatchObject({ verified: true, dns_failing_since: '' });
    expect((await admin<{ daily_quota: number }>(stack, 'GET', `/accounts/${accountId}`)).body.daily_quota).toBe(1000);

    // A resolver failure (SERVFAIL) is not an absence: the record keeps its status.
    zone.failing.add('checked.example');
    d = await verify(domain.id);
    expect(find(d, 'spf')[0]!.status).toBe('verified');
    zone.failing.delete('checked.example');

    // A verified record that disappears is failed; the domain stays verified and is flagged.
    zone.remove(dkim.name);
    d = await verify(domain.id);
    expect(find(d, 'dkim')[0]!.status).toBe('failed');
    expect(d.verified).toBe(true);
    expect(d.dns_failing_since).toMatch(ISO);
  });
});

describe('domain authentication against a real DNS server', () => {
  it('DKIM rotation: a pending key is published next to the active one, and signs only once its record is found', async () => {
    const { accountId, domain } = await newDomain('rotate.example');
    publish(domain.dns_records);
    expect((await verify(domain.id)).verified).toBe(true);
    const oldSelector = find(domain, 'dkim')[0]!.name.split('.')[0];

    const rotated = (await admin<Domain>(stack, 'POST', `/domains/${domain.id}/dkim/rotate`, {})).body;
    const dkims = find(rotated, 'dkim');
    expect(dkims.map((r) => r.status)).toEqual(['verified', 'pending']);
    const fresh = dkims[1]!;
    expect(fresh.name).not.toBe(dkims[0]!.name);
    expect(fresh.name).toMatch(/^m\d{8}-2\._domainkey\.rotate\.example$/);
    const again = await call('POST', `${stack.admin}/domains/${domain.id}/dkim/rotate`, {
      token: ADMIN_TOKEN,
      body: {},
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'conflict', message: expect.stringContaining('rotate.example') });

    const sql = db();
    try {
      // Not published yet: the old key keeps signing.
      expect(find(await verify(domain.id), 'dkim').map((r) => r.status)).toEqual(['verified', 'pending']);
      expect((await (await keyring(sql)).signingKey(accountId, 'rotate.example'))?.keySelector).toBe(oldSelector);

      publish([fresh]);
      const promoted = await verify(domain.id);
      expect(find(promoted, 'dkim').map((r) => [r.name, r.status])).toEqual([[fresh.name, 'verified']]);
      expect(promoted).toMatchObject({ verified: true, dns_failing_since: '' });
      expect((await (await keyring(sql)).signingKey(accountId, 'rotate.example'))?.keySelector).toBe(
        fresh.name.split('.')[0],
      );
      const keys = await sql<
        { selector: string; status: string }[]
      >`select selector, status from dkim_keys where domain_id = ${domain.id} order by id`;
      expect(keys.map((k) => [k.selector, k.status])).toEqual([
        [oldSelector, 'retired'],
        [fresh.name.split('.')[0], 'active'],
      ]);
      // A new rotation may start once the last one is done.
      expect(
        find((await admin<Domain>(stack, 'POST', `/domains/${domain.id}/dkim/rotate`, {})).body, 'dkim'),
      ).toHaveLength(2);
    } finally {
      await sql.end();
    }
  });

  it('the periodic re-check (its Temporal schedule) flags a verified domain whose records disappear, and clears it when they are back', async () => {
    const { domain } = await newDomain('watched.example');
    publish(domain.dns_records);
    expect((await verify(domain.id)).verified).toBe(true);
    const ownership = find(domain, 'ownership')[0]!;
    const sql = db();
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const schedule = new Client({ connection }).schedule.getHandle(dnsRecheckScheduleId(stack.taskQueue));
    const listed = async () =>
      (
        await admin<{ domains: Domain[] }>(
          stack,
          'GET',
          `/accounts/${(await sql`select account_id from domains where id = ${domain.id}`)[0]!.account_id}/domains`,
        )
      ).body.domains[0]!;
    /** Makes the domain due (its last check two hours old), runs the schedule now, and waits for the check. */
    const recheck = async () => {
      const [row] = await sql<
        { at: Date }[]
      >`update domains set dns_checked_at = now() - interval '2 hours' where id = ${domain.id} returning dns_checked_at as at`;
      const at = row!.at;
      await schedule.trigger();
      const deadline = Date.now() + 45_000;
      for (;;) {
        const d = await listed();
        if (new Date(d.dns_checked_at) > at) return d;
        if (Date.now() > deadline) throw new Error('the re-check did not run');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      zone.remove(ownership.name);
      const failing = await recheck();
      expect(find(failing, 'ownership')[0]!.status).toBe('failed');
      expect(failing).toMatchObject({ verified: true, dns_failing_since: expect.stringMatching(ISO) });

      publish([ownership]);
      const fine = await recheck();
      expect(find(fine, 'ownership')[0]!.status).toBe('verified');
      expect(fine).toMatchObject({ verified: true, dns_failing_since: '' });
    } finally {
      await connection.close();
      await sql.end();
    }
  });
});
