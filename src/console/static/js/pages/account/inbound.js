/**
 * The account's inbound mail: its routes (the addresses it receives mail at: listed, one added, one deleted)
 * and its inbox, newest first, a page at a time (`?page=` in the URL), each message with its sender, subject,
 * arrival, the route that took it and its SPF, DKIM and DMARC results. The operator acts as the account, with
 * the rules its own API keys have (docs/inbound.md).
 */
import { createInboundRoute, deleteInboundRoute, listInboundEmails, listInboundRoutes } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatNumber, formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { authBadges } from '../../ui/auth-badges.js';
import { confirmAction } from '../../ui/dialog.js';
import { field, onSubmit } from '../../ui/form.js';
import { pageOf, pagination } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';
import { dataTable } from '../../ui/table.js';

const INBOX_PAGE_SIZE = 20;
/** Routes are few (a handful of addresses per domain): one page of this many, the rest counted. */
const ROUTES_SHOWN = 100;

/** A sender as a mail client shows one: the display name, the address beneath. */
export function sender(message) {
  return message.from_name
    ? [message.from_name, h('span', { class: 'sub' }, message.from)]
    : message.from || '(no sender)';
}

export async function render({ account, query }) {
  const path = `/accounts/${account.id}/inbound`;
  const page = pageOf(query);
  const routeList = h('div', { class: 'route-list' });
  const [routes, inbox] = await Promise.all([
    listInboundRoutes(account.id, { page: 1, page_size: ROUTES_SHOWN }),
    listInboundEmails(account.id, { page, page_size: INBOX_PAGE_SIZE }),
  ]);
  /** route id → match, for the inbox's Route column (a deleted route's mail keeps its id). */
  const matches = new Map(routes.routes.map((r) => [r.id, r.match]));

  function showRoutes({ routes: list, total }) {
    replaceChildren(
      routeList,
      total > list.length
        ? h(
            'p',
            { class: 'list-count' },
            `The ${formatNumber(list.length)} newest of ${formatNumber(total)} routes are shown.`,
          )
        : null,
      dataTable({
        caption: `Inbound routes of ${account.name}`,
        empty: 'No routes: the account receives no mail. Add one below.',
        columns: [
          { label: 'Match' },
          { label: 'Id' },
          { label: 'Created' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: list.map((r) => [
          h('code', {}, r.match),
          h('code', {}, r.id),
          formatTime(r.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button secondary small',
              'aria-label': `Delete route ${r.match}`,
              onclick: () => remove(r),
            },
            'Delete',
          ),
        ]),
      }),
    );
  }

  async function reloadRoutes() {
    const answer = await listInboundRoutes(account.id, { page: 1, page_size: ROUTES_SHOWN });
    for (const r of answer.routes) matches.set(r.id, r.match);
    showRoutes(answer);
  }

  async function remove(route) {
    const confirmed = await confirmAction({
      title: `Delete the route ${route.match}?`,
      message:
        'Mail to it is refused from then on (550). Messages it already received stay in the inbox, as do their raw bytes.',
      confirmLabel: 'Delete route',
    });
    if (!confirmed) return;
    try {
      await deleteInboundRoute(route.id);
      announce(`Route ${route.match} deleted.`);
      await reloadRoutes();
    } catch (err) {
      announceError(err);
    }
  }

  showRoutes(routes);
  return h(
    'div',
    { class: 'stack' },
    section('Routes', routeList, h('h3', { class: 'subhead' }, 'Add a route'), addRouteForm(account, reloadRoutes)),
    section(
      'Inbox',
      h(
        'p',
        { class: 'list-count', role: 'status' },
        `${formatNumber(inbox.total)} ${inbox.total === 1 ? 'message' : 'messages'} received, newest first.`,
      ),
      h(
        'div',
        { class: 'inbox' },
        dataTable({
          caption: `Inbox of ${account.name}`,
          empty: page > 1 ? 'No messages on this page.' : 'No mail received yet: mail to a route arrives here.',
          columns: [
            { label: 'From' },
            { label: 'Subject' },
            { label: 'Received' },
            { label: 'Route' },
            { label: 'Authentication' },
          ],
          rows: inbox.inbound_emails.map((m) => [
            sender(m),
            h('a', { href: href(`${path}/${m.id}`) }, m.subject || '(no subject)', h('span', { class: 'sub' }, m.id)),
            h('time', { datetime: m.received_at }, formatTime(m.received_at)),
            [
              h('code', {}, matches.get(m.route_id) ?? m.route_id),
              m.mailbox_hash ? h('span', { class: 'sub' }, 'tag ', h('code', {}, m.mailbox_hash)) : null,
            ],
            authBadges(m.authentication),
          ]),
        }),
      ),
      pagination({
        page,
        pageSize: INBOX_PAGE_SIZE,
        total: inbox.total,
        label: 'Inbox',
        onPage: (p) => navigate(path, { page: p }),
      }),
    ),
  );
}

function addRouteForm(account, reload) {
  const match = h('input', {
    name: 'match',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'support@example.com or *@example.com',
  });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  return onSubmit(
    h(
      'form',
      { class: 'inline-form', 'aria-label': 'Add a route' },
      field(
        'Match',
        match,
        'local@domain or *@domain, on a verified domain of the account or a subdomain of one. Mail to local+tag@domain comes in with its tag.',
      ),
      h('button', { type: 'submit', class: 'button primary' }, 'Add route'),
      error,
    ),
    async () => {
      error.hidden = true;
      match.removeAttribute('aria-invalid');
      try {
        const route = await createInboundRoute(account.id, match.value.trim());
        match.value = '';
        announce(`Route ${route.match} added: publish the domain's inbound MX record (Domains) to receive its mail.`);
        await reload();
      } catch (err) {
        // Beside the form as well as announced: the API's message says what to correct (or who has the match).
        error.textContent = err.message;
        error.hidden = false;
        match.setAttribute('aria-invalid', 'true');
        announceError(err);
      }
    },
  );
}
