import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Egress shaping's admin surface (docs/api.md "Management API"; docs/deliverability.md "Egress shaping") against
 * the real service over REST and gRPC: GET /admin/egress lists the rules file's sites beside the state rows the
 * workers write (inserted here as they write them), with the pools' warm-up use; DELETE
 * /admin/egress/sites/:site/suspension lifts a site's hold, 404s a site nobody knows and refuses a name no site
 * can have; a rules file that does not parse is reported in rules.error, the answer still a 200.
 */
const RULES = `
site_grouping = "mx-domain"

[default]
connection_limit = 3
messages_per_connection = 100
rate = "600/min"

[site.google]
mx = ["*.google.com", "*.googlemail.com"]
connection_limit = 5
messages_per_connection = 50
rate = "1000/min"
[[site.google.automation]]
match = '4\\.7\\.28'
action = "suspend"
duration = "1h"

[pool.bulk]
streams = ["broadcast"]
[[pool.bulk.source]]
address = "127.0.0.3"
ehlo = "mta3.example.com"
warmup = { start = "${new Date().toISOString().slice(0, 10)}", daily = [50, 100] }
`;

let dir: string;
let rulesPath: string;
const stack = useStack(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'egress-admin-'));
  rulesPath = path.join(dir, 'egress-rules.toml');
  await fs.writeFile(rulesPath, RULES);
  return { MAILER_EGRESS_RULES: rulesPath, MAILER_EGRESS_POOLS: 'extra=127.0.0.9/mta9.example.com' };
});
const clients = useGrpcClients(stack);
let db: postgres.Sql;
beforeAll(() => {
  db = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await db?.end();
  await fs.rm(dir, { recursive: true, force: true });
});

const inMs = (ms: number) => new Date(Date.now() + ms);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

interface Site {
  site: string;
  mx: string[];
  connection_limit: number;
  messages_per_connection: number;
  rate: string;
  current_rate: string;
  throttled_until: string;
  suspended_until: string;
  suspended_sources: { address: string; until: string }[];
  connections: number;
  attempts_last_minute: number;
  last_replies: Record<string, unknown>[];
  updated_at: string;
}
interface Status {
  rules: { path: string; error: string };
  sites: Site[];
  pools: { name: string; streams: string[]; accounts: string[]; sources: Record<string, unknown>[] }[];
}

const status = async () => (await admin<Status>(stack, 'GET', '/egress')).body;
const site = (s: Status, name: string) => s.sites.find((x) => x.site === name);

const REPLY = {
  at: '2026-11-28T07:59:01.000Z',
  code: 421,
  status: '4.7.28',
  text: '421 4.7.28 Our system has detected an unusual rate of unsolicited mail',
  source: '127.0.0.3',
  action: 'suspend',
};

/** The rows as the workers write them (migration 32): google suspended, outlook.com throttled with a source held. */
async function seedState(): Promise<{ suspended: Date; throttled: Date; source: Date }> {
  const suspended = inMs(3_600_000);
  const throttled = inMs(1_800_000);
  const source = inMs(600_000);
  await db`delete from egress_sites`;
  await db`
    insert into egress_sites (site, suspended_until, last_replies, connections, attempts_last_minute, updated_at)
    values ('google', ${suspended}, ${db.json([REPLY])}, 0, 12, now())`;
  await db`
    insert into egress_sites (site, throttle_rate, throttled_until, suspended_sources, connections, attempts_last_minute)
    values ('outlook.com', '60/min', ${throttled},
      ${db.json([{ address: '127.0.0.3', until: source.toISOString() }])}, 2, 40)`;
  await db`
    insert into egress_warmup_usage (source_address, day, sent) values ('127.0.0.3', ${new Date().toISOString().slice(0, 10)}, 42)
    on conflict (source_address, day) do update set sent = 42`;
  return { suspended, throttled, source };
}

describe('GET /admin/egress', () => {
  it("lists the file's sites beside every state row, each with its shape, state and last replies, and the pools", async () => {
    const { suspended, throttled, source } = await seedState();
    const s = await status();
    expect(s.rules).toEqual({ path: rulesPath, error: '' });
    expect(s.sites.map((x) => x.site)).toEqual(['google', 'outlook.com']);
    expect(site(s, 'google')).toEqual({
      site: 'google',
      mx: ['*.google.com', '*.googlemail.com'],
      connection_limit: 5,
      messages_per_connection: 50,
      rate: '1000/min',
      current_rate: '1000/min',
      throttled_until: '',
      suspended_until: suspended.toISOString(),
      suspended_sources: [],
      connections: 0,
      attempts_last_minute: 12,
      last_replies: [REPLY],
      updated_at: expect.stringMatching(ISO),
    });
    // A site only the state knows (grouped by its MX's domain): the defaults' shape, its throttle in force.
    expect(site(s, 'outlook.com')).toMatchObject({
      mx: [],
      connection_limit: 3,
      messages_per_connection: 100,
      rate: '600/min',
      current_rate: '60/min',
      throttled_until: throttled.toISOString(),
      suspended_until: '',
      suspended_sources: [{ address: '127.0.0.3', until: source.toISOString() }],
      connections: 2,
      attempts_last_minute: 40,
      last_replies: [],
    });
    expect(s.pools).toEqual([
      {
        name: 'bulk',
        streams: ['broadcast'],
        accounts: [],
        sources: [{ address: '127.0.0.3', ehlo: 'mta3.example.com', warmup_limit_today: 50, sent_today: 42 }],
      },
      {
        name: 'extra',
        streams: [],
        accounts: [],
        sources: [{ address: '127.0.0.9', ehlo: 'mta9.example.com', warmup_limit_today: -1, sent_today: 0 }],
      },
    ]);
  });

  it('answers the same over gRPC, and only to the admin token', async () => {
    await seedState();
    const rest = await status();
    const viaGrpc = ok(await rpc(clients.admin, 'GetEgressStatus', {}, bearer(ADMIN_TOKEN)));
    expect(viaGrpc).toEqual(rest);

    const noToken = await call('GET', `${stack.admin}/egress`);
    expect(noToken.status).toBe(401);
    const withKey = await call('GET', `${stack.admin}/egress`, { token: stack.apiKey });
    expect(withKey.status).toBe(401);
    expect(grpc.status[failed(await rpc(clients.admin, 'GetEgressStatus', {}, bearer(undefined))).code]).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('reports a rules file that does not parse in rules.error, naming the key, and still answers', async () => {
    await seedState();
    try {
      await fs.writeFile(rulesPath, `${RULES}\n[site.broken]\nmx = ["*.broken.test"]\nspeed = 3\n`);
      const s = await status();
      expect(s.rules.path).toBe(rulesPath);
      expect(s.rules.error).toMatch(/site\.broken.*speed/);
      // The state is still shown, each row by its name.
      expect(s.sites.map((x) => x.site)).toEqual(expect.arrayContaining(['google', 'outlook.com']));
      expect(site(s, 'outlook.com')?.current_rate).toBe('60/min');
    } finally {
      await fs.writeFile(rulesPath, RULES);
    }
    expect((await status()).rules.error).toBe('');
  });
});

describe('DELETE /admin/egress/sites/:site/suspension', () => {
  it("ends the site's suspension, throttle and source suspensions, and answers the site", async () => {
    await seedState();
    const res = await admin<Site>(stack, 'DELETE', '/egress/sites/outlook.com/suspension');
    expect(res.body).toMatchObject({
      site: 'outlook.com',
      current_rate: '600/min',
      throttled_until: '',
      suspended_until: '',
      suspended_sources: [],
      attempts_last_minute: 40,
    });
    const [row] = await db<{ throttled_until: Date | null; suspended_sources: unknown[] }[]>`
      select throttled_until, suspended_sources from egress_sites where site = 'outlook.com'`;
    expect(row).toMatchObject({ throttled_until: null, suspended_sources: [] });
    expect(site(await status(), 'google')?.suspended_until).not.toBe('');

    // Over gRPC, the same.
    const viaGrpc = ok(await rpc(clients.admin, 'ResumeEgressSite', { site: 'google' }, bearer(ADMIN_TOKEN)));
    expect(viaGrpc).toMatchObject({ site: 'google', suspended_until: '', last_replies: [REPLY] });
    expect(site(await status(), 'google')).toMatchObject({ suspended_until: '', throttled_until: '' });
  });

  it('answers a site of the rules file with no state yet: there is nothing to lift', async () => {
    await db`delete from egress_sites`;
    const res = await admin<Site>(stack, 'DELETE', '/egress/sites/google/suspension');
    expect(res.body).toMatchObject({ site: 'google', suspended_until: '', updated_at: '' });
  });

  it('is a 404 for a site nobody knows and a 400 for a name no site can have, over REST and gRPC', async () => {
    const unknown = await call('DELETE', `${stack.admin}/egress/sites/nowhere.example/suspension`, {
      token: ADMIN_TOKEN,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'egress site nowhere.example not found' });
    expectSameError(
      failed(await rpc(clients.admin, 'ResumeEgressSite', { site: 'nowhere.example' }, bearer(ADMIN_TOKEN))),
      grpc.status.NOT_FOUND,
      unknown.body as { error: string; message: string },
    );

    for (const junk of ['a%20b', '%00', '..%2Fetc', '-x', 'a'.repeat(100) + 'b', '%C3%A9.test', '%27%20OR%201%3D1']) {
      const res = await call('DELETE', `${stack.admin}/egress/sites/${junk}/suspension`, { token: ADMIN_TOKEN });
      expect(res.status, `${junk}: ${res.text}`).toBe(junk.length > 100 ? 414 : 400);
      expect(res.body, junk).toMatchObject({ error: expect.any(String), message: expect.any(String) });
      if (res.status === 400) expect((res.body as { message: string }).message, junk).toMatch(/^site:? must/);
    }
    const bad = failed(await rpc(clients.admin, 'ResumeEgressSite', { site: '' }, bearer(ADMIN_TOKEN)));
    expect(grpc.status[bad.code]).toBe('INVALID_ARGUMENT');
    expect(bad.details).toMatch(/^site must be/);
  });
});
