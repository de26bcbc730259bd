import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishMx, sendEmail, setUpSenderDomain, useMailWorld, waitForStatus } from '../helpers/deliverability.js';
import { eventually } from '../helpers/http.js';

/**
 * Mail held back by egress shaping's own queue (docs/deliverability.md "Egress shaping"): a site takes one
 * connection and queues four sends behind it, so most of a burst finds the queue full. Nothing was tried for
 * those, and the site has room again within moments: they go out then, each once, not after the SMTP retry
 * schedule's first wait (60 s here), and their timelines show no failure.
 */
const SENDER = 'held-sender.test';
const BURST = 40;
// The rules file exists before the stack starts (it is read at start and whenever it changes).
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'egress-held-'));
const rules = path.join(dir, 'egress-rules.toml');
fs.writeFileSync(
  rules,
  ['[default]', 'connection_limit = 1', 'messages_per_connection = 1000', 'rate = "60000/min"', ''].join('\n'),
);
const world = useMailWorld('direct', { MAILER_SMTP_RETRY_FIRST_SECONDS: '60', MAILER_EGRESS_RULES: rules });
let db: postgres.Sql;
beforeAll(async () => {
  await setUpSenderDomain(world, SENDER);
  publishMx(world.dns, 'held.test', [{ ip: '127.0.0.2', priority: 10 }]);
  db = postgres(world.stack.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await db?.end();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('held mail', () => {
  it('goes out as the site has room, each message once, long before the retry schedule', async () => {
    const started = Date.now();
    const recipients = Array.from({ length: BURST }, (_, i) => `user${i}@held.test`);
    const ids = await Promise.all(
      recipients.map((to) => sendEmail(world.stack, { from: `Held <x@${SENDER}>`, to: [to] })),
    );
    const host = world.mx.host('127.0.0.2');
    const arrived = () => host.messages.filter((m) => m.envelopeTo.some((to) => to.endsWith('@held.test')));
    await eventually(async () => arrived().length >= BURST, 40_000, 100);
    // The schedule would have made the held ones wait 60 s.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(
      arrived()
        .flatMap((m) => m.envelopeTo)
        .sort(),
    ).toEqual([...recipients].sort());

    for (const id of ids) {
      const detail = await waitForStatus(world.stack, id, ['delivered']);
      expect(detail.events.map((e) => e.type)).toEqual(['send', 'delivery']);
    }
    // Some of the burst really was held (tried again under a new lease), or this test proves nothing.
    const [row] = await db<{ held: number }[]>`
      select count(*)::int as held from emails where id = any(${ids}) and attempts > 1`;
    expect(row?.held).toBeGreaterThan(0);
  });
});
