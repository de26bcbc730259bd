/** One account: its header, the section tabs, and the section the URL names. */
import { ApiError, getAccount } from '../api.js';
import { h } from '../dom.js';
import { href } from '../router.js';
import { pageHeader } from '../ui/page.js';
import { session } from '../session.js';
import { pill } from '../ui/pill.js';
import * as apiKeys from './account/api-keys.js';
import * as batches from './account/batches.js';
import * as domains from './account/domains.js';
import * as emails from './account/emails.js';
import * as inboundMessage from './account/inbound-message.js';
import * as inbound from './account/inbound.js';
import * as overview from './account/overview.js';
import * as scheduled from './account/scheduled.js';
import * as stats from './account/stats.js';
import * as suppressions from './account/suppressions.js';
import * as templateEditor from './account/template-editor.js';
import * as templates from './account/templates.js';
import * as webhookDeliveries from './account/webhook-deliveries.js';
import * as webhooks from './account/webhooks.js';

const SECTIONS = [
  { id: 'overview', label: 'Overview', page: overview },
  { id: 'stats', label: 'Stats', page: stats },
  { id: 'domains', label: 'Domains', page: domains },
  { id: 'api-keys', label: 'API keys', page: apiKeys },
  { id: 'webhooks', label: 'Webhooks', page: webhooks, itemPage: webhookDeliveries },
  { id: 'templates', label: 'Templates', page: templates, itemPage: templateEditor },
  { id: 'emails', label: 'Emails', page: emails },
  { id: 'inbound', label: 'Inbound', page: inbound, itemPage: inboundMessage },
  { id: 'batches', label: 'Batch jobs', page: batches },
  { id: 'scheduled', label: 'Scheduled', page: scheduled },
  { id: 'suppressions', label: 'Suppressions', page: suppressions },
];

export async function render(ctx) {
  const { id, tab = 'overview', itemId } = ctx.params;
  const current = SECTIONS.find((x) => x.id === tab);
  const page = itemId ? current?.itemPage : current?.page;
  if (!page)
    throw new ApiError(404, 'not found', `There is no page ${tab}${itemId ? `/${itemId}` : ''} for an account.`);

  const account = await getAccount(id);
  const body = await page.render({ ...ctx, account, itemId });
  return h(
    'div',
    { class: 'page' },
    // An account's session has no accounts list to go back to.
    pageHeader(account.name, {
      crumbs: session.isOperator() ? [['Accounts', href('/accounts')]] : [],
      meta: pill(account.status),
    }),
    h('p', { class: 'sub page-sub' }, account.id),
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Account sections' },
      h(
        'ul',
        {},
        SECTIONS.map((x) =>
          h(
            'li',
            {},
            h('a', { href: href(`/accounts/${id}/${x.id}`), 'aria-current': x.id === tab ? 'page' : null }, x.label),
          ),
        ),
      ),
    ),
    body,
  );
}
