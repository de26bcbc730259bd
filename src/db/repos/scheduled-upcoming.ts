import type { AccountStatus } from '../../domain/catalog.js';
import type { Sql } from '../sql.js';
import { emailRow, mailboxesOf, toEmail } from './emails-repo.js';
import type { StoredDraft } from '../../domain/entities/emails.js';
import { waitingScheduled } from './scheduled-window.js';
import type { UpcomingEmail } from '../../domain/entities/scheduled.js';

type Raw = {
  id: string;
  account_id: string;
  api_key_id: string | null;
  draft: StoredDraft;
  scheduled_at: Date;
  account_status: AccountStatus;
  open_tracking: boolean | null;
  click_tracking: boolean | null;
};

/**
 * The scheduled emails still waiting in [from, to), at most `limit` and (after the first) `maxBytes` of
 * drafts (waitingScheduled), each as the email row firing will make of it (emailRow, as fireDue builds it) with its sender's
 * state read as delivery reads it (loadMany): what building its message needs, before it exists. The
 * message's Date is the time it is due. Emails with attachments are left out: their content is the
 * largest, and it is read when they are sent.
 */
export async function upcomingScheduled(
  sql: Sql,
  q: { from: Date; to: Date; newEmailId: () => string; limit: number; maxBytes: number },
): Promise<UpcomingEmail[]> {
  const rows = await sql<Raw[]>`
    select u.id, u.account_id, u.api_key_id, u.draft, u.scheduled_at, a.status as account_status, d.open_tracking, d.click_tracking
    from (${waitingScheduled(sql, { from: q.from, to: q.to, limit: q.limit, withoutAttachments: true })}) u
    join accounts a on a.id = u.account_id
    left join domains d on d.account_id = u.account_id and d.name = u.draft->>'senderDomain'
    where u.bytes_before < ${q.maxBytes}
    order by u.scheduled_at, u.id`;
  return rows.map((r) => {
    const row = emailRow({
      id: q.newEmailId(),
      accountId: r.account_id,
      apiKeyId: r.api_key_id,
      jobType: 'scheduled',
      jobId: r.id,
      draft: r.draft,
      attachmentCount: 0,
    });
    const email = toEmail({
      ...row,
      mailboxes: mailboxesOf(r.draft),
      headers: r.draft.headers,
      tags: r.draft.tags,
      template: r.draft.template ?? null,
      status: 'pending',
      message_id: '',
      attempts: 0,
      created_at: r.scheduled_at,
      sent_at: null,
      remaining_recipients: null,
    });
    const sender = {
      accountStatus: r.account_status,
      openTracking: r.open_tracking === true,
      clickTracking: r.click_tracking === true,
    };
    return { scheduledId: r.id, loaded: { email, attachments: [], sender, lastError: '', answered: [] } };
  });
}
