import { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { AccountsService } from '../services/accounts-service.js';
import type { ApiKeysService } from '../services/api-keys-service.js';
import type { AuthService } from '../services/auth-service.js';
import type { CaughtMailService } from '../services/caught-mail-service.js';
import type { DomainsService } from '../services/domains-service.js';
import type { ErasureService } from '../services/erasure-service.js';
import type { OperatorService } from '../services/operator-service.js';
import type { SuppressionsService } from '../services/suppressions-service.js';
import type { WebhooksService } from '../services/webhooks-service.js';
import {
  presentAccount,
  presentApiKey,
  presentCaught,
  presentDay,
  presentDomain,
  presentEvent,
  presentWebhook,
  presentWebhookDelivery,
} from './admin-presenters.js';
import { callCredential, clientAddress, type CallContext, type Handlers } from './call-context.js';
import { withStorableStrings } from './storable-strings.js';
import { adminSuppressionCalls, type AdminSuppressionStreams } from './admin-suppressions-api.js';
import { adminTemplateCalls, type AdminTemplatesDeps } from './admin-templates-api.js';
import { adminInboundRouteCalls, type InboundRoutesApiDeps } from './inbound-routes-api.js';
import { adminInboundEmailCalls, type InboundEmailsApiDeps } from './inbound-emails-api.js';
import {
  adminDomainCalls,
  listedDomains,
  listedWebhooks,
  webhookDeleted,
  type SelfServiceApiDeps,
} from './self-service-api.js';
import { adminStatsCalls, type StatsApiDeps } from './stats-api.js';
import { adminEgressCalls, type EgressApiDeps } from './egress-api.js';
import { apiKeyDeleted, apiKeyToCreate, listedApiKeys } from './api-keys-api.js';
import { given } from './patch-fields.js';
import { presentBatch, presentEmail, presentEmailSummary, presentScheduled } from './presenters.js';

type AdminApi = Handlers<typeof AdminService>;

export interface AdminApiDeps {
  auth: AuthService;
  accounts: AccountsService;
  domains: DomainsService;
  apiKeys: ApiKeysService;
  webhooks: WebhooksService;
  operator: OperatorService;
  caught: CaughtMailService;
  erasure: ErasureService;
  templates: AdminTemplatesDeps;
  suppressions: SuppressionsService;
  inboundRoutes: InboundRoutesApiDeps;
  inboundEmails: InboundEmailsApiDeps;
  selfService: SelfServiceApiDeps;
  stats: StatsApiDeps;
  egress: EgressApiDeps;
}

/**
 * The one admin-token check of both adapters (the REST gateway also runs it before reading the body):
 * throttled per client address, which each adapter puts in the call's context.
 */
export function admitAdmin(auth: AuthService, ctx: CallContext): void {
  if (ctx.operator) return;
  auth.authenticateAdmin(callCredential(ctx), clientAddress(ctx));
  ctx.operator = true;
}

/** mail.v1.AdminService, the management API behind the console; every call needs the admin token. */
export function createAdminApi(deps: AdminApiDeps): AdminApi & AdminSuppressionStreams {
  const admin: Admit = async (ctx, run) => {
    admitAdmin(deps.auth, ctx);
    return run();
  };
  const { streamAccountSuppressionsCsv, ...suppressionCalls } = adminSuppressionCalls(deps.suppressions, admin);
  const api = withStorableStrings(AdminService, {
    ...setupCalls(deps, admin),
    ...webhookCalls(deps, admin),
    ...operatorCalls(deps, admin),
    ...adminTemplateCalls(deps.templates, admin),
    ...suppressionCalls,
    ...adminInboundRouteCalls(deps.inboundRoutes, admin),
    ...adminInboundEmailCalls(deps.inboundEmails, admin),
    ...adminDomainCalls(deps.selfService, admin),
    ...adminStatsCalls(deps.stats, admin),
    ...adminEgressCalls(deps.egress, admin),
  });
  return { ...api, streamAccountSuppressionsCsv };
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

// Each group is checked against the service's own signatures; createAdminApi's return type checks that together they are all of it.
function setupCalls(deps: AdminApiDeps, admin: Admit) {
  return {
    listAccounts: (_req, ctx) =>
      admin(ctx, async () => ({ accounts: (await deps.accounts.list()).map((a) => presentAccount(a)) })),
    createAccount: (req, ctx) => admin(ctx, async () => presentAccount(await deps.accounts.create(req.name))),
    getAccount: (req, ctx) => admin(ctx, async () => presentAccount(await deps.accounts.get(req.id))),
    updateAccount: (req, ctx) =>
      admin(ctx, async () =>
        presentAccount(
          await deps.accounts.update(
            req.id,
            given({
              status: req.status,
              dailyQuota: req.dailyQuota,
              brandName: req.brandName,
              brandLogoUrl: req.brandLogoUrl,
            }),
          ),
        ),
      ),

    createDomain: (req, ctx) =>
      admin(ctx, async () => presentDomain(await deps.domains.create(req.accountId, req.name))),
    listDomains: (req, ctx) => admin(ctx, async () => listedDomains(await deps.domains.list(req.accountId, req))),
    // The operator acts on any account's domain: no owner.
    verifyDomain: (req, ctx) =>
      admin(ctx, async () => presentDomain(await deps.domains.verify(undefined, req.id, req.force))),
    rotateDomainDkim: (req, ctx) =>
      admin(ctx, async () => presentDomain(await deps.domains.rotateDkim(undefined, req.id))),
    updateDomain: (req, ctx) =>
      admin(ctx, async () =>
        presentDomain(
          await deps.domains.updateTracking(
            undefined,
            req.id,
            given({ openTracking: req.openTracking, clickTracking: req.clickTracking }),
          ),
        ),
      ),

    createApiKey: (req, ctx) =>
      admin(ctx, async () => {
        const k = await deps.apiKeys.create(req.accountId, apiKeyToCreate(req));
        return presentApiKey(k, { key: k.key });
      }),
    listApiKeys: (req, ctx) => admin(ctx, async () => listedApiKeys(await deps.apiKeys.list(req.accountId, req))),
    deleteApiKey: (req, ctx) =>
      admin(ctx, async () => {
        await deps.apiKeys.delete(req.id);
        return apiKeyDeleted(req.id);
      }),
  } satisfies Partial<AdminApi>;
}

function webhookCalls(deps: AdminApiDeps, admin: Admit) {
  return {
    createWebhook: (req, ctx) =>
      admin(ctx, async () => {
        const w = await deps.webhooks.create(req.accountId, { url: req.url, events: req.events });
        return presentWebhook(w, w.secret);
      }),
    listWebhooks: (req, ctx) => admin(ctx, async () => listedWebhooks(await deps.webhooks.list(req.accountId, req))),
    // The operator acts on any account's webhook: no owner.
    deleteWebhook: (req, ctx) =>
      admin(ctx, async () => {
        await deps.webhooks.delete(undefined, req.id);
        return webhookDeleted(req.id);
      }),
    verifyWebhook: (req, ctx) => admin(ctx, () => deps.webhooks.verify(undefined, req.id)),
    rotateWebhookSecret: (req, ctx) =>
      admin(ctx, async () => {
        const w = await deps.webhooks.rotateSecret(undefined, req.id, req.overlapSeconds);
        return presentWebhook(w, w.secret);
      }),
    enableWebhook: (req, ctx) => admin(ctx, async () => presentWebhook(await deps.webhooks.enable(undefined, req.id))),
    resendWebhookDeliveries: (req, ctx) => admin(ctx, () => deps.webhooks.resendRange(undefined, req.id, req)),

    listWebhookDeliveries: (req, ctx) =>
      admin(ctx, async () => ({
        deliveries: (await deps.webhooks.deliveries(undefined, req.id, req)).map(presentWebhookDelivery),
      })),
    resendWebhookDelivery: (req, ctx) =>
      admin(ctx, async () => presentWebhookDelivery(await deps.webhooks.resend(undefined, req.id))),
  } satisfies Partial<AdminApi>;
}

function operatorCalls(deps: AdminApiDeps, admin: Admit) {
  return {
    listAccountEmails: (req, ctx) =>
      admin(ctx, async () => {
        const { rows, total } = await deps.operator.listEmails(req.accountId, req);
        return { data: rows.map(presentEmailSummary), total };
      }),
    getEmailDetail: (req, ctx) =>
      admin(ctx, async () => {
        const d = await deps.operator.emailDetail(req.id);
        return {
          email: presentEmail(d.email, d.attachments),
          accountId: d.accountId,
          events: d.events.map(presentEvent),
          openCount: d.tracking.openCount,
          clickCount: d.tracking.clickCount,
        };
      }),
    listAccountBatchJobs: (req, ctx) =>
      admin(ctx, async () => {
        const { rows, total } = await deps.operator.listBatches(req.accountId, req);
        return { batchJobs: rows.map(presentBatch), totalCount: total };
      }),
    listAccountScheduledEmails: (req, ctx) =>
      admin(ctx, async () => {
        const { rows, total } = await deps.operator.listScheduled(req.accountId, req);
        return { scheduledEmails: rows.map(presentScheduled), totalCount: total };
      }),
    cancelScheduledEmail: (req, ctx) => admin(ctx, () => deps.operator.cancelScheduled(req.id)),
    getAccountStats: (req, ctx) =>
      admin(ctx, async () => ({
        accountId: req.accountId,
        days: (await deps.operator.stats(req.accountId, req.days, req.stream)).map(presentDay),
      })),

    deleteSuppression: (req, ctx) =>
      admin(ctx, async () => {
        await deps.operator.deleteSuppression(req.id);
        return { success: true, message: `suppression ${req.id} removed` };
      }),

    eraseEmail: (req, ctx) => admin(ctx, () => deps.erasure.eraseEmail(req.id)),
    eraseRecipient: (req, ctx) =>
      admin(ctx, () => deps.erasure.eraseRecipient({ address: req.address, accountId: req.accountId })),

    listCaughtMessages: (req, ctx) =>
      admin(ctx, async () => ({ messages: (await deps.caught.list(req.limit)).map(presentCaught) })),
    getCaughtMessage: (req, ctx) =>
      admin(ctx, async () => {
        const m = await deps.caught.get(req.id);
        return { message: presentCaught(m.row), html: m.html, text: m.text, headers: m.headers };
      }),
  } satisfies Partial<AdminApi>;
}
