import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEgressRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { parseEgressRules } from '../../src/delivery/egress/rules-file.js';
import { createEgressShaper, type EgressShaperHandle } from '../../src/delivery/egress/shaper.js';
import { createDirectTransport } from '../../src/delivery/transport/direct/direct-transport.js';
import type { BuiltMessage } from '../../src/delivery/transport/send-built.js';
import type { MailTransport } from '../../src/delivery/transport/transport.js';
import { fakeDnsResolver } from '../helpers/fake-dns-resolver.js';
import { startMxHosts, type MxNetwork } from '../helpers/mx-servers.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * Egress shaping end to end through direct delivery: the real shaper (rules parsed from TOML, state in the
 * real PostgreSQL of migration 32), the real connection pool, real smtp-server MX hosts on 127.0.0.x; DNS is
 * the seam. Each rule action: throttle, suspend, suspend-source (the pool's other address takes over), bounce;
 * and the pool binding: the MX sees the pool's source address and its EHLO name.
 */

const RULES = `
[default]
connection_limit = 2

[site.throttled]
mx = ["*.throttle.test"]
[[site.throttled.automation]]
match = '^421 4\\.7\\.0 .*try again later'
action = "throttle"
rate = "1/min"
duration = "30m"

[site.suspended]
mx = ["*.suspend.test"]
[[site.suspended.automation]]
match = '4\\.7\\.28'
action = "suspend"
duration = "1h"

[site.sourced]
mx = ["*.source.test"]
[[site.sourced.automation]]
match = '4\\.7\\.500'
action = "suspend-source"
duration = "1h"

[site.bounced]
mx = ["*.bounce.test"]
[[site.bounced.automation]]
match = '4\\.2\\.2 .*over quota forever'
action = "bounce"

[site.slow]
mx = ["*.slow.test"]
connection_limit = 1

[pool.out]
streams = ["transactional"]
[[pool.out.source]]
address = "127.0.0.5"
ehlo = "a.sender.test"
[[pool.out.source]]
address = "127.0.0.6"
ehlo = "b.sender.test"
`;

const DOMAINS = ['throttle', 'suspend', 'source', 'bounce', 'plain', 'slow'];

let sql: Sql;
let network: MxNetwork;
let shaper: EgressShaperHandle;
let transport: MailTransport;
/** The reply the MX gives at DATA, per recipient domain (undefined: accepted). */
const replies = new Map<string, string>();
/** DATA commands the MX saw, per recipient domain (accepted or not). */
const dataSeen = new Map<string, number>();

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 4 });
  network = await startMxHosts([
    {
      address: '127.0.0.2',
      data: (raw) => {
        const domain = /^To: \S+@(\w+)\.test/m.exec(raw.toString())?.[1] ?? '';
        dataSeen.set(domain, (dataSeen.get(domain) ?? 0) + 1);
        if (domain === 'slow') return new Promise<undefined>((r) => setTimeout(() => r(undefined), 250));
        return replies.get(domain);
      },
    },
  ]);
});

afterAll(async () => {
  await network?.close();
  await sql?.end();
});

afterEach(async () => {
  transport?.close();
  await shaper?.close();
});

function setUp() {
  shaper = createEgressShaper({
    rules: { current: () => rules },
    repo: createEgressRepo(sql),
    logger: { warn: () => {}, error: () => {} },
    syncEveryMs: 0,
  });
  const zone = {
    mx: Object.fromEntries(DOMAINS.map((d) => [`${d}.test`, [{ exchange: `mx.${d}.test`, priority: 1 }]])),
    a: Object.fromEntries(DOMAINS.map((d) => [`mx.${d}.test`, ['127.0.0.2']])),
  };
  transport = createDirectTransport({
    resolver: fakeDnsResolver(zone),
    port: network.port,
    name: 'mailer.test',
    allowPrivate: true,
    logger: pino({ level: 'silent' }),
    shaper,
  });
  return { host: network.hosts[0]!, transport };
}
const rules = parseEgressRules(RULES);

let counter = 0;
function message(to: string): BuiltMessage {
  counter++;
  const messageId = `<egress-${counter}@mailer.test>`;
  const raw = `From: app@sender.test\r\nTo: ${to}\r\nSubject: ${counter}\r\nMessage-ID: ${messageId}\r\n\r\nhi\r\n`;
  return { messageId, envelope: { from: 'b@rp.sender.test', to: [to] }, raw: Buffer.from(raw) };
}
const context = { accountId: 'acc_1', stream: 'transactional' };

describe('egress shaping through direct delivery', () => {
  it('binds to the pool of the stream, each source with its EHLO name; a stream without a pool is unbound', async () => {
    const { host, transport } = setUp();
    const before = host.received.length;
    for (const to of ['a@plain.test', 'b@plain.test'])
      expect((await transport.send(message(to), context)).accepted).toHaveLength(1);
    await transport.send(message('c@plain.test'), { accountId: 'acc_1', stream: 'broadcast' });
    expect(host.received.slice(before).map((r) => [r.source, r.ehlo])).toEqual([
      ['127.0.0.5', 'a.sender.test'],
      ['127.0.0.6', 'b.sender.test'],
      ['127.0.0.1', 'mailer.test'],
    ]);
  });

  it('throttle: a matching 421 lowers the site to its rule rate, the next beyond it held without a connection', async () => {
    const { transport } = setUp();
    replies.set('throttle', '421 4.7.0 slow down, try again later');
    const first = await transport.send(message('a@throttle.test'), context);
    expect(first.deferred.map((d) => d.failure.code)).toEqual([421]);
    // 1/min: one token (a second's worth, at least one), then none.
    const second = await transport.send(message('b@throttle.test'), context);
    expect(second.deferred.map((d) => d.failure.code)).toEqual([421]);
    const third = await transport.send(message('c@throttle.test'), context);
    expect(third.deferred.map((d) => [d.failure.status, d.failure.diagnostic])).toEqual([
      ['4.4.5', '4.4.5 held by egress shaping: site throttled rate 1/min reached'],
    ]);
    expect(dataSeen.get('throttle')).toBe(2);
    expect(shaper.shapeOf('throttled').rate).toEqual({ count: 1, perMs: 60_000 });
  });

  it('suspend: a matching reply holds the whole site; other sites still go', async () => {
    const { transport } = setUp();
    replies.set('suspend', '421 4.7.28 unusual rate of unsolicited mail');
    const first = await transport.send(message('a@suspend.test'), context);
    expect(first.deferred.map((d) => d.failure.code)).toEqual([421]);
    const held = await transport.send(message('b@suspend.test'), context);
    expect(held.deferred[0]?.failure).toMatchObject({ kind: 'soft', status: '4.4.5', code: 0 });
    expect(held.deferred[0]?.failure.diagnostic).toMatch(
      /^4\.4\.5 held by egress shaping: site suspended suspended until /,
    );
    expect(dataSeen.get('suspend')).toBe(1);
    expect((await transport.send(message('c@plain.test'), context)).accepted).toHaveLength(1);
  });

  it("suspend-source: the source that got the reply rests at the site, the pool's other address takes its mail", async () => {
    const { host, transport } = setUp();
    replies.set('source', '451 4.7.500 server busy, try again later');
    const first = await transport.send(message('a@source.test'), context);
    expect(first.deferred.map((d) => d.failure.code)).toEqual([451]);
    replies.delete('source');
    const before = host.received.length;
    for (const to of ['b@source.test', 'c@source.test', 'd@source.test']) {
      expect((await transport.send(message(to), context)).accepted).toHaveLength(1);
    }
    expect(new Set(host.received.slice(before).map((r) => r.source))).toEqual(new Set(['127.0.0.6']));
    // The suspension is the site's only: the same source still sends elsewhere.
    const elsewhere = host.received.length;
    for (const to of ['e@plain.test', 'f@plain.test']) await transport.send(message(to), context);
    expect(
      host.received
        .slice(elsewhere)
        .map((r) => r.source)
        .sort(),
    ).toEqual(['127.0.0.5', '127.0.0.6']);
  });

  it('bounce: a temporary reply the rules call final refuses the recipients for good, with the reply', async () => {
    const { transport } = setUp();
    replies.set('bounce', '452 4.2.2 mailbox over quota forever');
    const result = await transport.send(message('a@bounce.test'), context);
    expect(result.deferred).toEqual([]);
    expect(result.refused).toEqual([
      {
        address: 'a@bounce.test',
        failure: { kind: 'hard', code: 452, status: '5.2.2', diagnostic: '452 4.2.2 mailbox over quota forever' },
      },
    ]);
  });

  it('a slow site holds at most its limit plus 4 x its limit waiting; the rest is deferred at once, and other sites go on', async () => {
    const { transport } = setUp();
    let slowDelivered = 0;
    const slow = Array.from({ length: 7 }, (_, i) =>
      transport.send(message(`s${i}@slow.test`), context).then((r) => {
        slowDelivered += r.accepted.length;
        return r;
      }),
    );
    expect((await transport.send(message('p@plain.test'), context)).accepted).toHaveLength(1);
    // Delivered before the slow site finished even its first message: it waited behind none of them.
    expect(slowDelivered).toBe(0);
    const results = await Promise.all(slow);
    expect(results.filter((r) => r.accepted.length === 1)).toHaveLength(5);
    const full = results.flatMap((r) => r.deferred.map((d) => [d.failure.status, d.failure.diagnostic]));
    expect(full).toEqual([
      ['4.4.5', '4.4.5 held by egress shaping: site slow queue full'],
      ['4.4.5', '4.4.5 held by egress shaping: site slow queue full'],
    ]);
    // A deferral of the shaping itself is no reply of the site: nothing recorded.
    await shaper.sync();
    const row = (await createEgressRepo(sql).listSites()).find((r) => r.site === 'slow');
    expect(row?.lastReplies ?? []).toEqual([]);
  });
});
