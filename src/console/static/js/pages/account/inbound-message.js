/**
 * One inbound message as a mail client would show it: who sent it to which address, its authentication, the
 * email of ours it answers, its HTML (in the sandboxed frame mail is always shown in: no script runs, nothing
 * remote loads), its text and the reply alone (stripped_text), its attachments and the raw message to download,
 * and every header.
 */
import { getInboundAttachment, getInboundEmail, getInboundRaw, listInboundRoutes } from '../../api.js';
import { h } from '../../dom.js';
import { formatAddresses, formatBytes, formatTime } from '../../format.js';
import { href } from '../../router.js';
import { authBadges } from '../../ui/auth-badges.js';
import { downloadButton } from '../../ui/download.js';
import { mailFrame } from '../../ui/mail-preview.js';
import { fact, section } from '../../ui/page.js';
import { dataTable } from '../../ui/table.js';

/**
 * Inline images (`cid:` in the HTML) larger than this stay out: each is fetched and written into the frame's
 * document as a data: URL (the only kind of image the console's policy lets the frame load).
 */
const INLINE_IMAGE_MAX_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPE = /^image\/[\w.+-]+$/i;

export async function render({ account, itemId }) {
  const [message, { routes }] = await Promise.all([
    getInboundEmail(itemId),
    listInboundRoutes(account.id, { page: 1, page_size: 100 }),
  ]);
  // The route's match when it still exists (a deleted route's mail keeps only its id).
  const route = routes.find((r) => r.id === message.route_id);
  const inboxPath = `/accounts/${account.id}/inbound`;
  const subject = message.subject || '(no subject)';
  const html = message.html ? await withInlineImages(message) : '';

  return h(
    'div',
    { class: 'stack inbound-message' },
    h('p', { class: 'back-link' }, h('a', { href: href(inboxPath) }, '← Inbox')),
    section(
      subject,
      h('p', { class: 'sub' }, message.id),
      h(
        'dl',
        { class: 'facts' },
        fact('From', message.from_name ? `${message.from_name} <${message.from}>` : message.from || '—'),
        fact('To', formatAddresses(message.to)),
        message.cc.length ? fact('Cc', formatAddresses(message.cc)) : null,
        message.reply_to.length ? fact('Reply-To', formatAddresses(message.reply_to)) : null,
        fact('Received', h('time', { datetime: message.received_at }, formatTime(message.received_at))),
        fact(
          'Route',
          route ? h('code', {}, route.match) : null,
          h('span', { class: route ? 'sub' : null }, h('code', {}, message.route_id)),
        ),
        fact('Tag', message.mailbox_hash ? h('code', {}, message.mailbox_hash) : '—'),
        fact('Authentication', authBadges(message.authentication)),
        fact('Message-ID', message.message_id ? h('code', {}, message.message_id) : '—'),
        message.in_reply_to ? fact('In-Reply-To', h('code', {}, message.in_reply_to)) : null,
        message.reply_to_email_id
          ? fact(
              'Reply to',
              h(
                'a',
                { href: href(`/emails/${message.reply_to_email_id}`), class: 'reply-to-email' },
                'our email ',
                h('code', {}, message.reply_to_email_id),
              ),
            )
          : null,
      ),
      downloadButton({
        label: 'Download raw message',
        filename: `${message.id}.eml`,
        fetchBlob: () => getInboundRaw(message.id),
        variant: 'secondary',
      }),
    ),
    section(
      'Content',
      h('h3', { class: 'subhead' }, 'HTML'),
      html ? mailFrame({ html, title: `HTML of “${subject}”` }) : h('p', { class: 'empty' }, 'No HTML part.'),
      h('h3', { class: 'subhead' }, 'Text'),
      message.text ? h('pre', { class: 'mail-text' }, message.text) : h('p', { class: 'empty' }, 'No text part.'),
      h('h3', { class: 'subhead' }, 'Reply without the quoted text'),
      message.stripped_text
        ? h('pre', { class: 'mail-text stripped-text' }, message.stripped_text)
        : h('p', { class: 'empty' }, 'Nothing above the quoted text.'),
    ),
    section('Attachments', attachmentTable(message)),
    section(
      'Headers',
      dataTable({
        caption: 'Headers, as they arrived',
        empty: 'No headers.',
        columns: [{ label: 'Name' }, { label: 'Value' }],
        rows: message.headers.map(({ name, value }) => [name, h('code', { class: 'header-value' }, value)]),
      }),
    ),
  );
}

function attachmentTable(message) {
  return dataTable({
    caption: `Attachments of ${message.id}`,
    empty: 'No attachments.',
    columns: [
      { label: 'File' },
      { label: 'Type' },
      { label: 'Size', numeric: true },
      { label: 'Content-ID' },
      { label: h('span', { class: 'visually-hidden' }, 'Download') },
    ],
    rows: message.attachments.map((a, n) => {
      const filename = a.filename || `attachment-${n}`;
      return [
        filename,
        h('code', {}, a.content_type),
        formatBytes(a.size),
        a.content_id ? h('code', {}, a.content_id) : '—',
        downloadButton({
          label: 'Download',
          name: `Download ${filename}`,
          filename,
          fetchBlob: () => getInboundAttachment(message.id, n),
        }),
      ];
    }),
  });
}

/**
 * The HTML with each `cid:` reference to an inline image replaced by that image as a data: URL, so the frame
 * shows what the sender embedded. An image that cannot be fetched keeps its cid: reference (and does not load).
 */
async function withInlineImages(message) {
  let html = message.html;
  const inline = message.attachments
    .map((a, n) => ({ ...a, n }))
    .filter(
      (a) => a.content_id && a.content_type.toLowerCase().startsWith('image/') && a.size <= INLINE_IMAGE_MAX_BYTES,
    );
  for (const a of inline) {
    const pattern = new RegExp(`cid:${escapeRegExp(a.content_id)}(?=["'\\s)>]|$)`, 'gi');
    if (!pattern.test(html)) continue;
    try {
      const bytes = await getInboundAttachment(message.id, a.n);
      // Typed as declared: the API serves some image types (SVG) as octet-stream, which an <img> would not show.
      const typed = IMAGE_TYPE.test(a.content_type) ? new window.Blob([bytes], { type: a.content_type }) : bytes;
      const dataUrl = await readAsDataUrl(typed);
      html = html.replace(pattern, () => dataUrl);
    } catch {
      // Left as it is: the message still reads without the picture.
    }
  }
  return html;
}

function readAsDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new window.FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
