import type { Sql } from 'postgres';

/** An hour from when the test file loaded: the seeded suspension and throttle last the whole file. */
export const EGRESS_HELD_UNTIL = new Date(Date.now() + 3_600_000);

/**
 * The egress state the operator's views are tested against (the CLI's `mailer egress status` and the console's
 * Egress page), written straight to the tables every worker reads: `google` suspended after a 421 4.7.28 from
 * 127.0.0.3, `outlook.com` throttled to 60/min with `outlookConnections` open, and 7 of 127.0.0.3's warm-up
 * allowance used today. Earlier rows are removed first.
 */
export async function seedEgressState(db: Sql, outlookConnections = 0): Promise<void> {
  await db`delete from egress_sites`;
  const reply = {
    at: '2026-11-28T07:59:01.000Z',
    code: 421,
    status: '4.7.28',
    text: '421 4.7.28 unusual rate of unsolicited mail',
    source: '127.0.0.3',
    action: 'suspend',
  };
  await db`insert into egress_sites (site, suspended_until, last_replies, connections, attempts_last_minute)
    values ('google', ${EGRESS_HELD_UNTIL}, ${db.json([reply])}, 1, 9)`;
  await db`insert into egress_sites (site, throttle_rate, throttled_until, connections)
    values ('outlook.com', '60/min', ${EGRESS_HELD_UNTIL}, ${outlookConnections})`;
  await db`insert into egress_warmup_usage (source_address, day, sent)
    values ('127.0.0.3', ${new Date().toISOString().slice(0, 10)}, 7)
    on conflict (source_address, day) do update set sent = 7`;
}
