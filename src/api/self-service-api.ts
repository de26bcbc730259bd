import { Code, ConnectError } from '@connectrpc/connect';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { CallContext, Handlers } from './call-context.js';
import type { Guard } from './guard.js';

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

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the services (issue 27)
export interface SelfServiceApiDeps {}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

const notYet = (): never => {
  throw new ConnectError('self-service is not built yet', Code.Unimplemented);
};

/** The account, its domains and its webhooks, managed with its own key (CONTRACT.md "Self-service"). */
export function createSelfServiceApi(
  _deps: SelfServiceApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, SelfServiceRpcs> {
  return {
    getAccount: notYet,
    createDomain: notYet,
    listDomains: notYet,
    getDomain: notYet,
    deleteDomain: notYet,
    verifyDomain: notYet,
    updateDomain: notYet,
    rotateDomainDkim: notYet,
    createWebhook: notYet,
    listWebhooks: notYet,
    deleteWebhook: notYet,
    verifyWebhook: notYet,
    rotateWebhookSecret: notYet,
    enableWebhook: notYet,
    resendWebhookDeliveries: notYet,
    listWebhookDeliveries: notYet,
    resendWebhookDelivery: notYet,
  };
}

/** A domain by id for the operator (mail.v1.AdminService). */
export function adminDomainCalls(
  _deps: SelfServiceApiDeps,
  _admin: Admit,
): Pick<Handlers<typeof AdminService>, AdminDomainRpcs> {
  return { getDomain: notYet, deleteDomain: notYet };
}
