/** One email: its fields, its content and the timeline of its events with their data. */
import { getAccount, getEmail } from '../api.js';
import { h } from '../dom.js';
import { formatAddresses, formatTime } from '../format.js';
import { href } from '../router.js';
import { mailPreview } from '../ui/mail-preview.js';
import { fact, pageHeader, section } from '../ui/page.js';
import { pill } from '../ui/pill.js';
import { session } from '../session.js';

export async function render({ params }) {
  const { email, account_id: accountId, events, open_count: opens, click_count: clicks } = await getEmail(params.id);
  const account = await getAccount(accountId);
  const jobLink = email.job_id
    ? h('a', { href: href(`/accounts/${accountId}/emails`, { job_id: email.job_id }) }, email.job_id)
    : null;

  return h(
    'div',
    { class: 'page' },
    pageHeader(email.subject || '(no subject)', {
      crumbs: [
        ...(session.isOperator() ? [['Accounts', href('/accounts')]] : []),
        [account.name, href(`/accounts/${accountId}`)],
        ['Emails', href(`/accounts/${accountId}/emails`)],
      ],
      meta: pill(email.status),
    }),
    h('p', { class: 'sub page-sub' }, email.id),
    h(
      'div',
      { class: 'split' },
      section('Events', timeline(events, accountId)),
      section(
        'Details',
        h(
          'dl',
          { class: 'facts one-column' },
          fact('From', email.from),
          fact('To', formatAddresses(email.to)),
          email.cc.length ? fact('Cc', formatAddresses(email.cc)) : null,
          email.bcc.length ? fact('Bcc', formatAddresses(email.bcc)) : null,
          email.reply_to.length ? fact('Reply-To', formatAddresses(email.reply_to)) : null,
          fact('Message-ID', email.message_id ? h('code', {}, email.message_id) : '—'),
          fact('Source', email.job_type, jobLink ? [' · ', jobLink] : null),
          fact('Created', formatTime(email.created_at)),
          // Repeats within the tracking window make no event, so the timeline alone undercounts them.
          opens || clicks ? fact('Tracked', `${opens} opens · ${clicks} clicks (repeats included)`) : null,
          Object.keys(email.tags).length
            ? fact(
                'Tags',
                Object.entries(email.tags).map(([k, v]) => h('code', { class: 'tag' }, `${k}=${v}`)),
              )
            : null,
          email.attachments.length ? fact('Attachments', email.attachments.map((a) => a.filename).join(', ')) : null,
        ),
      ),
    ),
    section('Content', mailPreview({ html: email.html, text: email.text, subject: email.subject })),
  );
}

function timeline(events, accountId) {
  if (events.length === 0)
    return h('p', { class: 'empty' }, 'No events yet: the email has not been handed to a mail server.');
  return h(
    'ol',
    { class: 'timeline' },
    events.map((e) => {
      const data = Object.entries(e.data ?? {});
      return h(
        'li',
        { class: 'timeline-item', 'data-event': e.type },
        h(
          'div',
          { class: 'timeline-head' },
          pill(e.type),
          h('time', { datetime: e.created_at }, formatTime(e.created_at)),
        ),
        data.length
          ? h(
              'dl',
              { class: 'event-data' },
              data.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, eventValue(k, v, accountId)))),
            )
          : null,
      );
    }),
  );
}

/** A value of an event's data; a reply's inbound_id links to the message that answered the email. */
function eventValue(key, value, accountId) {
  if (key === 'inbound_id' && typeof value === 'string')
    return h('a', { href: href(`/accounts/${accountId}/inbound/${value}`), class: 'reply-link' }, value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}
