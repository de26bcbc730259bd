import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { EmailQueryService } from '../services/email-query-service.js';
import type { EventsService } from '../services/events-service.js';
import type { BatchService } from '../services/batch-service.js';
import type { ScheduleService } from '../services/schedule-service.js';
import type { SendService } from '../services/send-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { withStorableStrings } from './storable-strings.js';
import type { Guard } from './guard.js';
import { presentMailEvent } from './event-presenter.js';
import { presentBatch, presentEmail, presentEmailSummary, presentScheduled } from './presenters.js';
import { createTemplatesApi, type TemplatesApiDeps } from './templates-api.js';
import { createSuppressionsApi, type SuppressionStreams } from './suppressions-api.js';
import type { SuppressionsService } from '../services/suppressions-service.js';
import { createInboundRoutesApi, type InboundRoutesApiDeps } from './inbound-routes-api.js';
import { createInboundEmailsApi, type InboundEmailsApiDeps } from './inbound-emails-api.js';
import { createSelfServiceApi, type SelfServiceApiDeps } from './self-service-api.js';
import { createApiKeysApi, type ApiKeysApiDeps } from './api-keys-api.js';
import { createStatsApi, type StatsApiDeps } from './stats-api.js';
import { createTimelineApi, type TimelineApiDeps } from './timeline-api.js';

type EmailApi = Handlers<typeof EmailService>;

export interface EmailApiDeps {
  guard: Guard;
  send: SendService;
  query: EmailQueryService;
  schedule: ScheduleService;
  batch: BatchService;
  events: EventsService;
  templates: Omit<TemplatesApiDeps, 'guard'>;
  suppressions: SuppressionsService;
  inboundRoutes: InboundRoutesApiDeps;
  inboundEmails: InboundEmailsApiDeps;
  selfService: SelfServiceApiDeps;
  apiKeys: ApiKeysApiDeps;
  stats: StatsApiDeps;
  timeline: TimelineApiDeps;
}

const idempotencyKey = (ctx: CallContext) => ctx.requestHeader.get('idempotency-key') ?? undefined;

/** mail.v1.EmailService, once, for both adapters: each RPC is a guarded call of a use case. */
export function createEmailApi(deps: EmailApiDeps): EmailApi & SuppressionStreams {
  const guard = deps.guard.guarded;
  const suppressions = createSuppressionsApi({ guard: deps.guard, suppressions: deps.suppressions });
  const api: EmailApi = withStorableStrings(EmailService, {
    sendEmail: (req, ctx) => guard(ctx, (p) => deps.send.send(p, req, idempotencyKey(ctx))),

    getEmail: (req, ctx) =>
      guard(ctx, async (p) => {
        const { email, attachments } = await deps.query.get(p, req.id);
        return presentEmail(email, attachments);
      }),

    listEmails: (req, ctx) =>
      guard(ctx, async (p) => {
        const { rows, total } = await deps.query.list(p, req);
        return { data: rows.map(presentEmailSummary), total };
      }),

    scheduleEmail: (req, ctx) => guard(ctx, (p) => deps.schedule.schedule(p, req, idempotencyKey(ctx))),
    listScheduledEmails: (req, ctx) =>
      guard(ctx, async (p) => {
        const { rows, total } = await deps.schedule.list(p, req);
        return { scheduledEmails: rows.map(presentScheduled), totalCount: total };
      }),
    getScheduledEmail: (req, ctx) => guard(ctx, async (p) => presentScheduled(await deps.schedule.get(p, req.id))),
    cancelScheduledEmail: (req, ctx) => guard(ctx, (p) => deps.schedule.cancel(p, req.id)),

    sendBatch: (req, ctx) => guard(ctx, (p) => deps.batch.send(p, req.emails, idempotencyKey(ctx))),
    listBatchJobs: (req, ctx) =>
      guard(ctx, async (p) => {
        const { rows, total } = await deps.batch.list(p, req);
        return { batchJobs: rows.map(presentBatch), totalCount: total };
      }),
    getBatchJob: (req, ctx) => guard(ctx, async (p) => presentBatch(await deps.batch.get(p, req.id))),

    listEvents: (req, ctx) =>
      guard(ctx, async (p) => {
        const { events, nextCursor } = await deps.events.list(p, req);
        return { events: events.map(presentMailEvent), nextCursor };
      }),

    ...createTemplatesApi({ guard: deps.guard, ...deps.templates }),
    ...suppressions,
    ...createInboundRoutesApi({ guard: deps.guard, ...deps.inboundRoutes }),
    ...createInboundEmailsApi({ guard: deps.guard, ...deps.inboundEmails }),
    ...createSelfServiceApi({ guard: deps.guard, ...deps.selfService }),
    ...createApiKeysApi({ guard: deps.guard, ...deps.apiKeys }),
    ...createStatsApi({ guard: deps.guard, ...deps.stats }),
    ...createTimelineApi({ guard: deps.guard, ...deps.timeline }),
  });
  return { ...api, streamSuppressionsCsv: suppressions.streamSuppressionsCsv };
}
