import { addressKey, canonicalAddress } from '../../domain/address.js';
import { asciiDomain } from '../../domain/domain-name.js';
import type { Tx } from '../sql.js';

/**
 * Every address in its one canonical form (domain/address.ts): rows accepted before it kept the address as
 * written, so `bob@bücher.de` and `bob@xn--bcher-kva.de` were two people to suppression and erasure, and a
 * fullwidth or soft-hyphenated domain slipped past a suppression of the plain one. The conversion is UTS #46,
 * which SQL does not have, so this migration is a TypeScript step (run in the migration's transaction).
 *
 * Only rows that change are rewritten: those whose addresses hold a character outside printable ASCII or an
 * upper-case letter after the @ (one filtered scan per table). Emails, scheduled emails, events and API keys'
 * allowed domains take the canonical form (in events, only addresses with a non-ASCII domain: their other text
 * quotes what servers said); suppressions take the address key (lower case), and a suppression that now
 * equals another of its account is merged into it.
 */
export const sql = '';

const NOT_CANONICAL = '@[^ ,"{}]*([^ -~]|[A-Z])';
const NON_ASCII_AFTER_AT = '@[^ ,"{}]*[^ -~]';
const NON_ASCII = /[^ -~]/;
const BATCH = 1000;

type Mailbox = { name: string; address: string };
type Mailboxes = { from: Mailbox; to: Mailbox[]; cc: Mailbox[]; bcc: Mailbox[]; replyTo: Mailbox[] };

const canonical = (a: string): string => canonicalAddress(a) ?? a;
const canonicalList = (list: string[] | null): string[] | null => (list === null ? null : list.map(canonical));
const canonicalBox = (m: Mailbox): Mailbox => ({ ...m, address: canonical(m.address) });
const canonicalBoxes = <T extends Partial<Mailboxes>>(m: T): T => ({
  ...m,
  ...(m.from && { from: canonicalBox(m.from) }),
  ...Object.fromEntries(
    (['to', 'cc', 'bcc', 'replyTo'] as const)
      .filter((k) => Array.isArray(m[k]))
      .map((k) => [k, m[k]!.map(canonicalBox)]),
  ),
});

// An address inside free text or an event's fields: converted where its domain is a domain.
const ADDRESS_IN_TEXT = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[^\s<>,;"'()[\]{}]+/g;
function canonicalJson(value: unknown): unknown {
  // Only non-ASCII domains: a diagnostic's `<Bob@Example.COM>` is a quote of what a server said, left as it was.
  if (typeof value === 'string') return value.replace(ADDRESS_IN_TEXT, (a) => (NON_ASCII.test(a) ? canonical(a) : a));
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonicalJson(v)]));
  return value;
}

/** Reads rows in id order a batch at a time (`select` answers those after an id), and hands each batch on. */
async function eachBatch<R extends { id: string }>(
  select: (after: string) => Promise<R[]>,
  write: (rows: R[]) => Promise<void>,
) {
  for (let after = ''; ;) {
    const rows = await select(after);
    if (rows.length > 0) await write(rows);
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}

export async function run(tx: Tx): Promise<void> {
  type EmailRaw = {
    id: string;
    mailboxes: Mailboxes;
    from_address: string;
    to_addresses: string[];
    cc_addresses: string[];
    bcc_addresses: string[];
    reply_to: string[];
    remaining_recipients: string[] | null;
  };
  await eachBatch<EmailRaw>(
    (after) => tx<EmailRaw[]>`
    select id, mailboxes, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to, remaining_recipients from emails
    where id > ${after} and array_to_string(from_address || to_addresses || cc_addresses || bcc_addresses || reply_to, ' ') ~ ${NOT_CANONICAL}
    order by id limit ${BATCH}`,
    async (rows) => {
      const changed = rows.map((r) => ({
        id: r.id,
        mailboxes: canonicalBoxes(r.mailboxes),
        from_address: canonical(r.from_address),
        to_addresses: canonicalList(r.to_addresses),
        cc_addresses: canonicalList(r.cc_addresses),
        bcc_addresses: canonicalList(r.bcc_addresses),
        reply_to: canonicalList(r.reply_to),
        // Remaining recipients are compared, not shown: their key, as delivery writes them.
        remaining_recipients: r.remaining_recipients === null ? null : r.remaining_recipients.map(addressKey),
      }));
      await tx`
      update emails e set mailboxes = r.mailboxes, from_address = r.from_address, to_addresses = r.to_addresses, cc_addresses = r.cc_addresses,
        bcc_addresses = r.bcc_addresses, reply_to = r.reply_to, remaining_recipients = r.remaining_recipients
      from jsonb_to_recordset(${tx.json(changed as never)}) as r(id text, mailboxes jsonb, from_address text, to_addresses text[],
        cc_addresses text[], bcc_addresses text[], reply_to text[], remaining_recipients text[])
      where e.id = r.id`;
    },
  );

  type ScheduledRaw = {
    id: string;
    draft: Partial<Mailboxes> & Record<string, unknown>;
    from_address: string;
    to_addresses: string[];
  };
  await eachBatch<ScheduledRaw>(
    (after) => tx<ScheduledRaw[]>`
    select id, draft, from_address, to_addresses from scheduled_emails
    where id > ${after} and (jsonb_path_query_array(draft, '$.*.address') || jsonb_path_query_array(draft, '$.*[*].address'))::text ~ ${NOT_CANONICAL}
    order by id limit ${BATCH}`,
    async (rows) => {
      const changed = rows.map((r) => ({
        id: r.id,
        draft: canonicalBoxes(r.draft),
        from_address: canonical(r.from_address),
        to_addresses: canonicalList(r.to_addresses),
      }));
      await tx`
      update scheduled_emails s set draft = r.draft, from_address = r.from_address, to_addresses = r.to_addresses
      from jsonb_to_recordset(${tx.json(changed as never)}) as r(id text, draft jsonb, from_address text, to_addresses text[])
      where s.id = r.id`;
    },
  );

  type EventRaw = { id: string; data: unknown };
  await eachBatch<EventRaw>(
    (after) => tx<EventRaw[]>`
    select id, data from events where id > ${after} and data::text ~ ${NON_ASCII_AFTER_AT} order by id limit ${BATCH}`,
    async (rows) => {
      const changed = rows.map((r) => ({ id: r.id, data: canonicalJson(r.data) }));
      await tx`update events e set data = r.data from jsonb_to_recordset(${tx.json(changed as never)}) as r(id text, data jsonb) where e.id = r.id`;
    },
  );

  // Suppressions hold the key (lower case); a digest left by an erasure (sha256:...) has no @ and is kept.
  type SuppressionRaw = { id: string; account_id: string; address: string };
  const suppressions = await tx<SuppressionRaw[]>`
    select id, account_id, address from suppressions where address ~ ${NOT_CANONICAL} or address ~ '[A-Z]' order by id`;
  for (const s of suppressions) {
    const key = addressKey(s.address);
    if (key === s.address) continue;
    const [kept] = await tx<
      { id: string }[]
    >`select id from suppressions where account_id = ${s.account_id} and address = ${key}`;
    if (kept) await tx`delete from suppressions where id = ${s.id}`;
    else await tx`update suppressions set address = ${key} where id = ${s.id}`;
  }

  type KeyRaw = { id: string; allowed_domains: string[] };
  const keys = await tx<
    KeyRaw[]
  >`select id, allowed_domains from api_keys where array_to_string(allowed_domains, ' ') ~ '[^ -~]'`;
  for (const k of keys) {
    await tx`update api_keys set allowed_domains = ${k.allowed_domains.map((d) => asciiDomain(d) ?? d)} where id = ${k.id}`;
  }
}
