import { decodeHTMLAttribute } from 'entities';
import { attributeValue, rewriteAnchors } from './rewrite-anchors.js';
import { createTokenSealer } from '../../secrets/token-sealer.js';

/**
 * Open and click tracking for HTML mail: a pixel, and `<a href>` links rewritten to this service's public
 * URL, each carrying a signed token.
 *
 * A token (token-sealer.ts) carries the email id (open) or the email id, a newline and the link exactly as it
 * was in the email (click), with a mac by the service's key. The link travels in the token, so no table is
 * needed, and the click endpoint redirects only to a link this service signed for that email: changing one
 * byte of the link or of the email id breaks the mac, so the endpoint cannot be used as an open redirect.
 *
 * A link opts out of click tracking with `data-mailer-track="false"` on its `<a>`.
 */

export interface LinkTracker {
  /** The HTML with the pixel (open) and tracked links (click); the same HTML when both are off. */
  rewrite(html: string, emailId: string, opts: { open: boolean; click: boolean }): string;
  /** The pixel's URL for an email. */
  pixelUrl(emailId: string): string;
  /** The tracked URL of a link of an email. */
  clickUrl(emailId: string, link: string): string;
  /** The email id of a pixel token, or undefined for a token this service did not sign. */
  verifyOpen(token: string): string | undefined;
  /**
   * What a click token was signed for: `link` as written in the email (the event's data) and `redirectTo`,
   * the same URL serialized for a Location header. Undefined for a token this service did not sign.
   */
  verifyClick(token: string): { emailId: string; link: string; redirectTo: string } | undefined;
}

const OPEN_PATH = '/t/o/';
const CLICK_PATH = '/t/c/';

/** Longer links are left untracked: the tracked URL must stay well within what clients and servers accept. */
export const MAX_LINK_BYTES = 2048;
/** Distinct links tracked per email; later ones are left as they are (a real message has far fewer). */
export const MAX_TRACKED_LINKS = 1000;
const MAX_EMAIL_ID_BYTES = 64;
/** An href longer than this, as written, is left alone: no real link is, and the work per link stays bounded. */
const MAX_RAW_HREF = MAX_LINK_BYTES * 8;
const PIXEL_ATTRIBUTES =
  'width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0"';

/**
 * The value a browser reads from an attribute as written, `&amp;` and the other references decoded (a legacy
 * named reference without `;` followed by a letter, digit or `=` stays text, so `?a=1&copy=2` keeps its `&copy`).
 */
export const decodeAttribute: (value: string) => string = decodeHTMLAttribute;

export function createLinkTracker(options: { baseUrl: string; key: Buffer | string }): LinkTracker {
  if (Buffer.byteLength(options.key) < 16) throw new Error('the tracking key must have at least 16 bytes');
  // Origin and path only: a query or fragment in the configured URL would swallow the token.
  const parsed = new URL(options.baseUrl);
  const base = parsed.origin + parsed.pathname.replace(/\/+$/, '');
  const trackingPrefix = `${base}/t/`;
  // 'o' (open) and 'c' (click) purposes keep a pixel token from ever verifying as a click token and the other way round.
  const sealer = createTokenSealer(options.key, MAX_EMAIL_ID_BYTES + 1 + MAX_LINK_BYTES);

  // The newline separates the email id from the link in a click token.
  const checkId = (emailId: string) => {
    if (emailId === '' || emailId.includes('\n') || Buffer.byteLength(emailId) > MAX_EMAIL_ID_BYTES)
      throw new Error(`not an email id: ${emailId}`);
    return emailId;
  };
  const pixelUrl = (emailId: string) => `${base}${OPEN_PATH}${sealer.seal('o', checkId(emailId))}`;
  const clickUrl = (emailId: string, link: string) =>
    `${base}${CLICK_PATH}${sealer.seal('c', `${checkId(emailId)}\n${link}`)}`;

  /** The link an href stands for, if it is one to track. */
  const trackable = (rawHref: string): string | undefined => {
    if (rawHref.length > MAX_RAW_HREF) return undefined;
    const url = attributeValue(rawHref);
    if (!/^https?:/i.test(url) || url.startsWith(trackingPrefix) || Buffer.byteLength(url) > MAX_LINK_BYTES)
      return undefined;
    return URL.canParse(url) ? url : undefined;
  };

  /** Each distinct href signed once, and at most MAX_TRACKED_LINKS of them, so the work per message stays small whatever its HTML holds. */
  const trackLinks = (html: string, emailId: string) => {
    const urls = new Map<string, string | undefined>();
    let signed = 0;
    return rewriteAnchors(html, (rawHref) => {
      if (urls.has(rawHref)) return urls.get(rawHref);
      const link = signed < MAX_TRACKED_LINKS ? trackable(rawHref) : undefined;
      const url = link === undefined ? undefined : escapeAttribute(clickUrl(emailId, link));
      if (url !== undefined) signed++;
      urls.set(rawHref, url);
      return url;
    });
  };

  const addPixel = (html: string, emailId: string) => {
    const src = escapeAttribute(pixelUrl(emailId));
    // The pixel's URL is the same for every rewrite of this email: once is enough.
    return html.includes(src) ? html : insertBeforeBodyEnd(html, `<img src="${src}" ${PIXEL_ATTRIBUTES}>`);
  };

  return {
    pixelUrl,
    clickUrl,
    rewrite(html, emailId, opts) {
      const clicked = opts.click ? trackLinks(html, emailId) : html;
      return opts.open ? addPixel(clicked, emailId) : clicked;
    },
    verifyOpen: (token) => sealer.unseal('o', token),
    verifyClick(token) {
      const payload = sealer.unseal('c', token);
      const newline = payload?.indexOf('\n') ?? -1;
      if (payload === undefined || newline < 1) return undefined;
      const link = payload.slice(newline + 1);
      // rewrite signs only http(s) links; checked again so that nothing else signed can become a redirect.
      const url = URL.canParse(link) ? new URL(link) : undefined;
      if (url?.protocol !== 'http:' && url?.protocol !== 'https:') return undefined;
      return { emailId: payload.slice(0, newline), link, redirectTo: url.href };
    },
  };
}

/** `&`, quotes: enough for a URL to sit in a double-, single- or un-quoted attribute value. */
function escapeAttribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Before the last `</body>`, or at the end of an HTML fragment without one. */
function insertBeforeBodyEnd(html: string, fragment: string): string {
  let last = -1;
  for (const m of html.matchAll(/<\/body[\s/>]/gi)) last = m.index;
  return last === -1 ? html + fragment : html.slice(0, last) + fragment + html.slice(last);
}
