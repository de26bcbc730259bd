import type { Sql } from '../sql.js';
import type { CaughtMessageRow } from '../../domain/entities/caught-messages.js';

type Raw = {
  id: string;
  message_id: string;
  envelope_from: string;
  envelope_to: string[];
  subject: string;
  size: number;
  path: string;
  received_at: Date;
};
const toRow = (r: Raw): CaughtMessageRow => ({
  id: r.id,
  messageId: r.message_id,
  envelopeFrom: r.envelope_from,
  envelopeTo: r.envelope_to,
  subject: r.subject,
  size: r.size,
  path: r.path,
  receivedAt: r.received_at,
});

export function createCaughtMessagesRepo(sql: Sql) {
  return {
    async insert(m: Omit<CaughtMessageRow, 'receivedAt'> & { raw: Buffer }): Promise<void> {
      await sql`
        insert into caught_messages (id, message_id, envelope_from, envelope_to, subject, size, path, raw)
        values (${m.id}, ${m.messageId}, ${m.envelopeFrom}, ${m.envelopeTo}, ${m.subject}, ${m.size}, ${m.path}, ${m.raw})`;
    },

    async get(id: string): Promise<(CaughtMessageRow & { raw: Buffer }) | undefined> {
      const [row] = await sql<(Raw & { raw: Buffer })[]>`select * from caught_messages where id = ${id}`;
      return row && { ...toRow(row), raw: row.raw };
    },

    async list(limit: number): Promise<CaughtMessageRow[]> {
      const rows = await sql<Raw[]>`
        select id, message_id, envelope_from, envelope_to, subject, size, path, received_at
        from caught_messages order by id desc limit ${limit}`;
      return rows.map(toRow);
    },
  };
}
export type CaughtMessagesRepo = ReturnType<typeof createCaughtMessagesRepo>;
