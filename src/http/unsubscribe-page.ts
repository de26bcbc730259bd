import crypto from 'node:crypto';
import type { UnsubscribeTarget } from '../domain/entities/unsubscribes.js';

/**
 * The unsubscribe pages (GET: a button that posts; after the POST: a confirmation), small static HTML that works
 * without JavaScript: no script at all, one inline style block allowed by its hash, images only over https
 * (the account's logo), forms posting only to this origin. Everything from the account or the email (brand
 * name, logo URL, topic) is escaped where it is written.
 */

const STYLE = `body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f4f4f5}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px}
img{max-height:64px;max-width:100%;display:block;margin-bottom:1rem}
h1{font-size:1.5rem;margin:0 0 1rem}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:6px;background:#1d4ed8;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #93c5fd;outline-offset:2px}
.note{color:#52525b;font-size:.9rem}`;

/** The page's Content-Security-Policy: nothing but the style block above, https images and posts to itself. */
export const UNSUBSCRIBE_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'`,
  'img-src https:',
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text and attribute values alike. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

/** What the recipient is (or was) unsubscribed from, in words (escaped). */
function what(target: UnsubscribeTarget): string {
  const from = escapeHtml(target.brandName);
  return target.topic === null ? `all broadcast mail from ${from}` : `“${escapeHtml(target.topic)}” mail from ${from}`;
}

function page(target: UnsubscribeTarget | undefined, title: string, body: string): string {
  const logo =
    target?.brandLogoUrl?.startsWith('https://') === true
      ? `<img src="${escapeHtml(target.brandLogoUrl)}" alt="${escapeHtml(target.brandName)}">\n`
      : '';
  const heading = target ? `${escapeHtml(title)} — ${escapeHtml(target.brandName)}` : escapeHtml(title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${heading}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${logo}${body}
</main>
</body>
</html>
`;
}

/** The page a GET answers: what the button unsubscribes from, and the button (a form that posts the RFC 8058 body). */
export function unsubscribePage(target: UnsubscribeTarget, action: string): string {
  return page(
    target,
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p id="what">Stop receiving ${what(target)} at this address?</p>
<form method="post" action="${escapeHtml(action)}" aria-describedby="what">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>
<p class="note">Messages you need about your account, such as receipts or password resets, are not affected.</p>`,
  );
}

/** The page a POST answers: the recipient is unsubscribed (whether by this request or an earlier one). */
export function unsubscribedPage(target: UnsubscribeTarget): string {
  return page(
    target,
    'Unsubscribed',
    `<h1>You are unsubscribed</h1>
<p role="status">You will no longer receive ${what(target)} at this address.</p>`,
  );
}

/** The page a browser gets for a link this server did not sign (or whose email is gone). */
export function invalidLinkPage(message: string): string {
  return page(undefined, 'Link not valid', `<h1>This link is not valid</h1>\n<p>${escapeHtml(message)}</p>`);
}
