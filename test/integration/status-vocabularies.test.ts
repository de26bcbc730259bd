import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTED_LISTS } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import {
  ACCOUNT_STATUSES,
  BATCH_STATUSES,
  DKIM_KEY_STATUSES,
  EMAIL_STATUSES,
  EVENT_TYPES,
  JOB_TYPES,
  PERMISSIONS,
  SCHEDULED_FILTERS,
  SCHEDULED_STATUSES,
  STATS_DIMENSIONS,
  STATS_GROUPS,
  STREAMS,
  SUPPRESSION_REASONS,
  SUPPRESSION_SCOPES,
} from '../../src/domain/catalog.js';
import { DELIVERY_STATUSES } from '../../src/services/webhooks-service.js';
import { createTestDatabase } from '../helpers/stack.js';

/*
 * The spec's vocabularies are written in three places: the TypeScript lists, the proto's field comments
 * (what gRPC callers read) and the database's CHECK constraints (what the migrations created). Each
 * vocabulary below names where it appears; every enumerated comment and every CHECK list must be one of them.
 */
interface Vocabulary {
  values: readonly string[];
  /** `Message.field` whose comment lists the values as `a | b | c`. */
  proto: string[];
  /** `table.column` whose CHECK allows exactly these values. */
  checks: string[];
}
const VOCABULARIES: Record<string, Vocabulary> = {
  EMAIL_STATUSES: { values: EMAIL_STATUSES, proto: ['Email.status'], checks: ['emails.status'] },
  JOB_TYPES: { values: JOB_TYPES, proto: ['Email.job_type'], checks: ['emails.job_type'] },
  STREAMS: {
    values: STREAMS,
    proto: [
      'SendEmailRequest.stream',
      'ScheduleEmailRequest.stream',
      'Email.stream',
      'EmailSummary.stream',
      'ListEmailsRequest.stream',
      'ListAccountEmailsRequest.stream',
      'GetAccountStatsRequest.stream',
      'StreamHealth.stream',
      'StreamCompliance.stream',
    ],
    checks: ['emails.stream'],
  },
  SCHEDULED_STATUSES: {
    values: SCHEDULED_STATUSES,
    proto: ['ScheduledEmail.status'],
    checks: ['scheduled_emails.status'],
  },
  SCHEDULED_FILTERS: { values: SCHEDULED_FILTERS, proto: ['ListScheduledEmailsRequest.status'], checks: [] },
  BATCH_STATUSES: {
    values: BATCH_STATUSES,
    proto: ['BatchJob.status', 'ListBatchJobsRequest.status'],
    checks: ['batch_jobs.status'],
  },
  EVENT_TYPES: {
    values: EVENT_TYPES,
    proto: ['EmailEvent.type', 'MailEvent.event', 'ListEventsRequest.type'],
    checks: ['events.type'],
  },
  ACCOUNT_STATUSES: { values: ACCOUNT_STATUSES, proto: ['Account.status'], checks: ['accounts.status'] },
  SUPPRESSION_REASONS: {
    values: SUPPRESSION_REASONS,
    proto: [
      'Suppression.reason',
      'SuppressionEntry.reason',
      'SearchSuppressionsRequest.reason',
      'ListSuppressionsRequest.reason',
    ],
    checks: ['suppressions.reason'],
  },
  SUPPRESSION_SCOPES: {
    values: SUPPRESSION_SCOPES,
    proto: [
      'Suppression.scope',
      'SuppressionEntry.scope',
      'SearchSuppressionsRequest.scope',
      'AddSuppressionRequest.scope',
      'AddAccountSuppressionRequest.scope',
      'ListSuppressionsRequest.scope',
      'RemoveSuppressionRequest.scope',
    ],
    checks: ['suppressions.scope'],
  },
  PERMISSIONS: {
    values: PERMISSIONS,
    proto: ['ApiKey.permission', 'CreateApiKeyRequest.permission'],
    checks: ['api_keys.permission'],
  },
  STATS_GROUPS: { values: STATS_GROUPS, proto: ['GetStatsRequest.group_by'], checks: [] },
  STATS_DIMENSIONS: { values: STATS_DIMENSIONS, proto: [], checks: ['stats_rollup.dim'] },
  DKIM_KEY_STATUSES: { values: DKIM_KEY_STATUSES, proto: [], checks: ['dkim_keys.status'] },
  COUNTED_LISTS: { values: COUNTED_LISTS, proto: [], checks: ['list_counts.list'] },
  DELIVERY_STATUSES: {
    values: DELIVERY_STATUSES,
    proto: ['WebhookDelivery.status', 'ListWebhookDeliveriesRequest.status'],
    checks: ['webhook_deliveries.status'],
  },
};
/** Columns whose CHECK allows a part of a vocabulary: tracking records only opens and clicks. */
const SUBSETS: Record<string, readonly string[]> = { 'tracking_windows.kind': EVENT_TYPES };

const PROTO_DIR = path.join(import.meta.dirname, '../../proto/mail/v1');
// `// a | b (note) | c; more words`: the values, each perhaps with a note in parentheses.
const ENUMERATED = /^\s*\/\/ ([a-z_]+(?: \([^)]*\))?(?: \| [a-z_]+(?: \([^)]*\))?)+)(?:;.*)?$/;
const FIELD = /^\s*(?:optional |repeated )?[\w.]+ (\w+) = \d+;/;

/** `Message.field` -> the values its comment lists, for every field with an enumerated comment. */
async function protoVocabularies(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const file of (await fs.readdir(PROTO_DIR)).filter((f) => f.endsWith('.proto'))) {
    let message = '';
    let pending: string[] | undefined;
    for (const line of (await fs.readFile(path.join(PROTO_DIR, file), 'utf8')).split('\n')) {
      message = /^message (\w+) \{/.exec(line)?.[1] ?? message;
      const listed = ENUMERATED.exec(line);
      const field = FIELD.exec(line);
      if (listed) pending = listed[1]!.split(' | ').map((v) => v.replace(/ \(.*\)$/, ''));
      else if (field && pending) found.set(`${message}.${field[1]}`, pending);
      if (!listed && !/^\s*\/\//.test(line)) pending = undefined;
    }
  }
  return found;
}

let sql: Sql;
beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 1 });
});
afterAll(async () => {
  await sql?.end();
});

/** `table.column` -> the values its CHECK (column IN (...)) allows, read from the database's catalog. */
async function checkVocabularies(): Promise<Map<string, string[]>> {
  const rows = await sql<{ tbl: string; def: string }[]>`
    select conrelid::regclass::text as tbl, pg_get_constraintdef(oid) as def from pg_constraint
    where contype = 'c' and connamespace = 'public'::regnamespace`;
  const found = new Map<string, string[]>();
  for (const { tbl, def } of rows) {
    const m = /^CHECK \(\((\w+) = ANY \(ARRAY\[(.*)\]\)\)\)$/.exec(def);
    if (m)
      found.set(
        `${tbl}.${m[1]}`,
        [...m[2]!.matchAll(/'([^']*)'::text/g)].map((v) => v[1]!),
      );
  }
  return found;
}

describe('status vocabularies', () => {
  it('the proto comments list what domain/catalog lists, and every enumerated comment is a known vocabulary', async () => {
    const proto = await protoVocabularies();
    const claimed = Object.values(VOCABULARIES).flatMap((v) => v.proto);
    expect([...proto.keys()].sort()).toEqual([...claimed].sort());
    for (const [name, v] of Object.entries(VOCABULARIES)) {
      for (const field of v.proto)
        expect({ name, field, values: proto.get(field) }).toEqual({ name, field, values: [...v.values] });
    }
  });

  it('the CHECK constraints allow what domain/catalog lists, and every CHECK list is a known vocabulary', async () => {
    const checks = await checkVocabularies();
    const claimed = [...Object.values(VOCABULARIES).flatMap((v) => v.checks), ...Object.keys(SUBSETS)];
    expect([...checks.keys()].sort()).toEqual(claimed.sort());
    for (const [name, v] of Object.entries(VOCABULARIES)) {
      for (const column of v.checks) {
        expect({ name, column, values: [...checks.get(column)!].sort() }).toEqual({
          name,
          column,
          values: [...v.values].sort(),
        });
      }
    }
    for (const [column, whole] of Object.entries(SUBSETS)) {
      expect(checks.get(column)!.filter((value) => !whole.includes(value))).toEqual([]);
    }
  });
});
