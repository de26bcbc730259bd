import type { EmailFilter, EmailRow, EmailSummaryRow, StoredAttachment } from '../domain/entities/emails.js';
import type { EmailsRepo } from '../db/index.js';
import { EMAIL_STATUSES, filterOf, isOneOf, JOB_TYPES, STREAMS } from '../domain/catalog.js';
import { toPage } from '../domain/pagination.js';
import { assertAllowed } from '../domain/permissions.js';
import { invalid, notFound } from '../errors.js';
import type { Principal } from './auth-service.js';

export interface ListEmailsQuery {
  page: number;
  pageSize: number;
  status: string;
  jobType: string;
  jobId: string;
  stream: string;
}

/** Reading emails. Another account's email is a 404, exactly like one that does not exist. */
export function createEmailQueryService(deps: { emails: Pick<EmailsRepo, 'get' | 'list' | 'attachments'> }) {
  return {
    async get(principal: Principal, id: string): Promise<{ email: EmailRow; attachments: StoredAttachment[] }> {
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      const email = await deps.emails.get(principal.accountId, id);
      if (!email) throw notFound('email', id);
      const attachments = email.attachmentCount > 0 ? await deps.emails.attachments(id) : [];
      return { email, attachments };
    },

    async list(principal: Principal, q: ListEmailsQuery): Promise<{ rows: EmailSummaryRow[]; total: number }> {
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      const filter: EmailFilter = {};
      if (q.status !== '') {
        if (!isOneOf(EMAIL_STATUSES, q.status))
          throw invalid(`status must be one of ${EMAIL_STATUSES.join(', ')}; got "${q.status}"`);
        filter.status = q.status;
      }
      if (q.jobType !== '') {
        if (!isOneOf(JOB_TYPES, q.jobType))
          throw invalid(`job_type must be one of ${JOB_TYPES.join(', ')}; got "${q.jobType}"`);
        filter.jobType = q.jobType;
      }
      if (q.jobId !== '') filter.jobId = q.jobId;
      const stream = filterOf('stream', STREAMS, q.stream);
      if (stream) filter.stream = stream;
      return deps.emails.list(principal.accountId, filter, limit, offset);
    },
  };
}
export type EmailQueryService = ReturnType<typeof createEmailQueryService>;
