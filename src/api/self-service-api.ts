import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { WebhookRow } from '../domain/entities/webhooks.js';
import { AppError } from '../errors.js';
import type { AccountsService } from '../services/accounts-service.js';
import type { DomainView, DomainsService } from '../services/domains-service.js';
import type { WebhooksService } from '../services/webhooks-service.js';
import { presentAccount, presentDomain, presentWebhook, presentWebhookDelivery } from './admin-presenters.js';
import type { CallContext, Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';
import { given } from './patch-fields.js';

type SelfServiceRpcs =
  | 'getAccount'
  | 'createDomain'
  | 'listDomains'
  | 'getDomain'
  | 'deleteDomain'
  | 'verifyDomain'
  | 'updateDomain'
  | 'rotateDomainDkim'
  | 'createWebhook'
  | 'listWebhooks'
  | 'deleteWebhook'
  | 'verifyWebhook'
  | 'rotateWebhookSecret'
  | 'enableWebhook'
  | 'resendWebhookDeliveries'
  | 'listWebhookDeliveries'
  | 'resendWebhookDelivery';
type AdminDomainRpcs = 'getDomain' | 'deleteDomain';

/** The services both APIs share: the admin API is these with the account named in the path. */
export interface SelfServiceApiDeps {
  accounts: Pick<AccountsService, 'get'>;
  domains: DomainsService;
  webhooks: WebhooksService;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/** A page of domains as both APIs answer it: `{domains, total}`. */
export const listedDomains = ({ rows, total }: { rows: DomainView[]; total: number }) => ({
  domains: rows.map(presentDomain),
  total,
});

/** A page of webhooks as both APIs answer it: `{webhooks, total}`, never a secret. */
export const listedWebhooks = ({ rows, total }: { rows: WebhookRow[]; total: number }) => ({
  webhooks: rows.map((w) => presentWebhook(w)),
  total,
});

export const webhookDeleted = (id: string) => ({ success: true, message: `webhook ${id} deleted` });

/**
 * The account, its domains and its webhooks, managed with its own key (CONTRACT.md "Self-service"). Any key
 * reads its account; domains and webhooks are read by keys of permission `all` or `read_only` and changed by
 * `all` keys only. Every call acts on the key's own account: another account's domain, webhook or delivery is
 * a 404 worded as an unknown one's.
 */
export function createSelfServiceApi(
  deps: SelfServiceApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, SelfServiceRpcs> {
  const { accounts, domains, webhooks } = deps;
  const account = permitting(deps.guard, 'read_account');
  const read = permitting(deps.guard, 'read_settings');
  const manage = permitting(deps.guard, 'manage_settings');
  return {
    getAccount: (_req, ctx) => account(ctx, async (a) => presentAccount(await accounts.get(a))),

    createDomain: (req, ctx) => manage(ctx, async (a) => presentDomain(await domains.create(a, req.name))),
    listDomains: (req, ctx) => read(ctx, async (a) => listedDomains(await domains.list(a, req))),
    getDomain: (req, ctx) => read(ctx, async (a) => presentDomain(await domains.get(a, req.id))),
    deleteDomain: (req, ctx) => manage(ctx, async (a) => ({ success: true, ...(await domains.delete(a, req.id)) })),
    verifyDomain: (req, ctx) =>
      manage(ctx, async (a) => {
        // Verifying without the records in DNS is the operator's override (its seeded domain, a test setup):
        // an account could otherwise send as any domain it names.
        if (req.force)
          throw new AppError(
            'permission_denied',
            "force is the operator's alone (the management API): publish the domain's dns_records and verify again without it",
          );
        return presentDomain(await domains.verify(a, req.id, false));
      }),
    updateDomain: (req, ctx) =>
      manage(ctx, async (a) =>
        presentDomain(
          await domains.updateTracking(
            a,
            req.id,
            given({ openTracking: req.openTracking, clickTracking: req.clickTracking }),
          ),
        ),
      ),
    rotateDomainDkim: (req, ctx) => manage(ctx, async (a) => presentDomain(await domains.rotateDkim(a, req.id))),

    createWebhook: (req, ctx) =>
      manage(ctx, async (a) => {
        const w = await webhooks.create(a, { url: req.url, events: req.events });
        return presentWebhook(w, w.secret);
      }),
    listWebhooks: (req, ctx) => read(ctx, async (a) => listedWebhooks(await webhooks.list(a, req))),
    deleteWebhook: (req, ctx) =>
      manage(ctx, async (a) => {
        await webhooks.delete(a, req.id);
        return webhookDeleted(req.id);
      }),
    verifyWebhook: (req, ctx) => manage(ctx, (a) => webhooks.verify(a, req.id)),
    rotateWebhookSecret: (req, ctx) =>
      manage(ctx, async (a) => {
        const w = await webhooks.rotateSecret(a, req.id, req.overlapSeconds);
        return presentWebhook(w, w.secret);
      }),
    enableWebhook: (req, ctx) => manage(ctx, async (a) => presentWebhook(await webhooks.enable(a, req.id))),
    resendWebhookDeliveries: (req, ctx) => manage(ctx, (a) => webhooks.resendRange(a, req.id, req)),
    listWebhookDeliveries: (req, ctx) =>
      read(ctx, async (a) => ({
        deliveries: (await webhooks.deliveries(a, req.id, req)).map(presentWebhookDelivery),
      })),
    resendWebhookDelivery: (req, ctx) =>
      manage(ctx, async (a) => presentWebhookDelivery(await webhooks.resend(a, req.id))),
  };
}

/** A domain by id for the operator (mail.v1.AdminService): any account's. */
export function adminDomainCalls(
  deps: SelfServiceApiDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, AdminDomainRpcs> {
  return {
    getDomain: (req, ctx) => admin(ctx, async () => presentDomain(await deps.domains.get(undefined, req.id))),
    deleteDomain: (req, ctx) =>
      admin(ctx, async () => ({ success: true, ...(await deps.domains.delete(undefined, req.id)) })),
  };
}
