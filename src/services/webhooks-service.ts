import type { AccountsRepo } from '../db/repos/accounts-repo.js';
import type { WebhookRow, WebhooksRepo } from '../db/repos/webhooks-repo.js';
import { EVENT_TYPES, isOneOf } from '../domain/catalog.js';
import { invalid, notFound, notImplemented } from '../errors.js';
import { newId } from '../ids.js';
import type { UrlCheck } from '../webhooks/address-guard.js';
import { generateWebhookSecret } from './secrets.js';

const URL_MAX = 2048;

export interface WebhooksDeps {
  webhooks: WebhooksRepo;
  accounts: Pick<AccountsRepo, 'get'>;
  checkUrl: (url: string) => Promise<UrlCheck>;
}

export function createWebhooksService(deps: WebhooksDeps) {
  return {
    /** Creates a webhook; the answer is the only place the signing secret ever appears. */
    async create(accountId: string, input: { url: string; events: string[] }): Promise<WebhookRow> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      if (input.url === '') throw invalid('url is required');
      if (input.url.length > URL_MAX) throw invalid(`url: length ${input.url.length} exceeds the maximum of ${URL_MAX} characters`);
      const check = await deps.checkUrl(input.url);
      if (!check.ok) throw invalid(`url: ${check.reason}`);
      if (input.events.length === 0) throw invalid(`events is required: one or more of ${EVENT_TYPES.join(', ')}`);
      input.events.forEach((e, i) => {
        if (!isOneOf(EVENT_TYPES, e)) throw invalid(`events[${i}]: "${e}" is not one of ${EVENT_TYPES.join(', ')}`);
      });
      return deps.webhooks.create({
        id: newId('webhook'), accountId, url: input.url, events: [...new Set(input.events)], secret: generateWebhookSecret(),
      });
    },

    async list(accountId: string): Promise<WebhookRow[]> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      return deps.webhooks.listByAccount(accountId);
    },

    async delete(id: string): Promise<void> {
      if (!(await deps.webhooks.softDelete(id))) throw notFound('webhook', id);
    },

    async verify(id: string): Promise<never> {
      if (!(await deps.webhooks.get(id))) throw notFound('webhook', id);
      throw notImplemented('Webhook verification (the signed test request)');
    },
  };
}
export type WebhooksService = ReturnType<typeof createWebhooksService>;
