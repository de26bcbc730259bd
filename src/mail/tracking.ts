import crypto from 'node:crypto';

/**
 * Open and click tracking for HTML mail: a pixel, and `<a href>` links rewritten to this service's public
 * URL, each carrying a signed token.
 *
 * A token is base64url(payload ‖ mac): the payload is the email id (open) or the email id, a newline and
 * the link exactly as it was in the email (click); the mac is HMAC-SHA256 over a purpose prefix and the
 * payload with the service's key, truncated to 16 bytes. The link travels in the token, so no table is
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
/** The opt-out attribute: `<a data-mailer-track="false" href="...">` is left as it is. */
const OPT_OUT_ATTRIBUTE = 'data-mailer-track';

const MAC_BYTES = 16;
/** Longer links are left untracked: the tracked URL must stay well within what clients and servers accept. */
export const MAX_LINK_BYTES = 2048;
/** Distinct links tracked per email; later ones are left as they are (a real message has far fewer). */
export const MAX_TRACKED_LINKS = 1000;
const MAX_EMAIL_ID_BYTES = 64;
const MAX_TOKEN_CHARS = Math.ceil((MAX_EMAIL_ID_BYTES + 1 + MAX_LINK_BYTES + MAC_BYTES) / 3) * 4;
/** An href longer than this is left alone undecoded: no real link is, and the work per link stays bounded. */
const MAX_RAW_HREF = MAX_LINK_BYTES * 8;

export function createLinkTracker(options: { baseUrl: string; key: Buffer | string }): LinkTracker {
  const key = options.key;
  if (Buffer.byteLength(key) < 16) throw new Error('the tracking key must have at least 16 bytes');
  // Origin and path only: a query or fragment in the configured URL would swallow the token.
  const parsed = new URL(options.baseUrl);
  const base = parsed.origin + parsed.pathname.replace(/\/+$/, '');
  const trackingPrefix = `${base}/t/`;

  // The purpose prefix keeps a pixel token from ever verifying as a click token and the other way round.
  const mac = (purpose: 'o' | 'c', payload: Buffer) =>
    crypto.createHmac('sha256', key).update(`${purpose}:`).update(payload).digest().subarray(0, MAC_BYTES);

  const sign = (purpose: 'o' | 'c', payload: string) => {
    const bytes = Buffer.from(payload, 'utf8');
    return Buffer.concat([bytes, mac(purpose, bytes)]).toString('base64url');
  };

  /** The payload of a token this service signed for `purpose`, else undefined. */
  const unseal = (purpose: 'o' | 'c', token: string): string | undefined => {
    if (token.length > MAX_TOKEN_CHARS) return undefined;
    const bytes = Buffer.from(token, 'base64url');
    // The decoder skips characters it does not know and ignores spare bits: only the one canonical spelling counts.
    if (bytes.length <= MAC_BYTES || bytes.toString('base64url') !== token) return undefined;
    const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
    if (!crypto.timingSafeEqual(bytes.subarray(bytes.length - MAC_BYTES), mac(purpose, payload))) return undefined;
    return payload.toString('utf8');
  };

  // The newline separates the email id from the link in a click token.
  const checkId = (emailId: string) => {
    if (emailId === '' || emailId.includes('\n') || Buffer.byteLength(emailId) > MAX_EMAIL_ID_BYTES) throw new Error(`not an email id: ${emailId}`);
  };
  const openToken = (emailId: string) => {
    checkId(emailId);
    return sign('o', emailId);
  };
  const clickToken = (emailId: string, link: string) => {
    checkId(emailId);
    return sign('c', `${emailId}\n${link}`);
  };

  /** The link an href stands for, if it is one to track. */
  const trackable = (rawHref: string): string | undefined => {
    if (rawHref.length > MAX_RAW_HREF) return undefined;
    const link = trimAsciiWhitespace(decodeAttribute(rawHref));
    if (!/^https?:/i.test(link) || link.startsWith(trackingPrefix) || Buffer.byteLength(link) > MAX_LINK_BYTES) return undefined;
    return URL.canParse(link) ? link : undefined;
  };

  const pixelUrl = (emailId: string) => `${base}${OPEN_PATH}${openToken(emailId)}`;
  const clickUrl = (emailId: string, link: string) => `${base}${CLICK_PATH}${clickToken(emailId, link)}`;

  return {
    pixelUrl,
    clickUrl,

    rewrite(html, emailId, opts) {
      let out = html;
      if (opts.click) {
        // Signing costs a few microseconds: once per distinct href, and for at most MAX_TRACKED_LINKS of
        // them, so the work per message stays small whatever its HTML holds.
        const urls = new Map<string, string | undefined>();
        let signed = 0;
        out = rewriteAnchors(out, (rawHref) => {
          if (urls.has(rawHref)) return urls.get(rawHref);
          const link = signed < MAX_TRACKED_LINKS ? trackable(rawHref) : undefined;
          const url = link === undefined ? undefined : escapeAttribute(clickUrl(emailId, link));
          if (url !== undefined) signed++;
          urls.set(rawHref, url);
          return url;
        });
      }
      if (opts.open) {
        const src = escapeAttribute(pixelUrl(emailId));
        // The pixel's URL is the same for every rewrite of this email: once is enough.
        if (!out.includes(src)) out = insertBeforeBodyEnd(out, `<img src="${src}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`);
      }
      return out;
    },

    verifyOpen: (token) => unseal('o', token),

    verifyClick(token) {
      const payload = unseal('c', token);
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

/** HTML's whitespace: tab, line feed, form feed, carriage return, space. */
const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;

/** HTML strips only ASCII whitespace around a URL (String.prototype.trim would also strip U+00A0). */
function trimAsciiWhitespace(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWs(s.charCodeAt(a))) a++;
  while (b > a && isWs(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const REFERENCE = /&(?:#([0-9]+)|#[xX]([0-9a-fA-F]+)|(amp|lt|gt|quot|apos|nbsp))(;?)/g;

/**
 * The value a browser reads from an attribute: numeric references and the named ones that occur in URLs
 * (`&amp;` above all). As in browsers, a legacy named reference without `;` followed by a letter, digit or
 * `=` stays text, so `?a=1&copy=2` keeps its `&copy`.
 */
export function decodeAttribute(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(REFERENCE, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined, semi: string, offset: number) => {
    if (name !== undefined) {
      if (semi === ';') return NAMED[name]!;
      const next = value.charAt(offset + whole.length);
      return name === 'apos' || /[0-9A-Za-z=]/.test(next) ? whole : NAMED[name]!;
    }
    const cp = dec !== undefined ? parseInt(dec, 10) : parseInt(hex!, 16);
    return cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? '\ufffd' : String.fromCodePoint(cp);
  });
}

/** An attribute value as written (entities not decoded) and where it sits in the HTML, quotes excluded. */
interface RawValue {
  value: string;
  start: number;
  end: number;
}

interface StartTag {
  /** For an `<a>` only: its first href and opt-out attribute (browsers keep the first of repeated ones). */
  href: RawValue | undefined;
  optOut: RawValue | undefined;
  /** Just after its `>`, or the end of the HTML when the tag never closes. */
  end: number;
  closed: boolean;
}

/**
 * Replaces the href of every `<a>` for which `replace` answers a value, keeping everything else byte for
 * byte (the attribute's quotes included). Each start tag is read as the HTML tokenizer reads attributes,
 * so `<img alt="<a href=...>">` is not a link and a `>` inside quotes does not end a tag; the scan only
 * moves forward, so it is linear in the size of the HTML whatever the input.
 */
function rewriteAnchors(html: string, replace: (rawHref: string) => string | undefined): string {
  const parts: string[] = [];
  let copied = 0;
  let at = html.indexOf('<');
  while (at !== -1) {
    const tag = readStartTag(html, at);
    if (!tag) {
      at = html.indexOf('<', at + 1);
      continue;
    }
    const { href, optOut } = tag;
    const optedOut = optOut !== undefined && trimAsciiWhitespace(decodeAttribute(optOut.value)).toLowerCase() === 'false';
    const replacement = tag.closed && href && !optedOut ? replace(href.value) : undefined;
    if (href && replacement !== undefined) {
      parts.push(html.slice(copied, href.start), replacement);
      copied = href.end;
    }
    at = html.indexOf('<', tag.end);
  }
  if (copied === 0) return html;
  parts.push(html.slice(copied));
  return parts.join('');
}

const isAsciiLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const SLASH = 0x2f;
const GT = 0x3e;
const EQUALS = 0x3d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
/** Ends a tag or attribute name. */
const endsName = (c: number) => isWs(c) || c === SLASH || c === GT;

/** The start tag at `at` (a `<`), or undefined when none starts there (text, an end tag, a comment). */
function readStartTag(html: string, at: number): StartTag | undefined {
  const n = html.length;
  let i = at + 1;
  if (i >= n || !isAsciiLetter(html.charCodeAt(i))) return undefined;
  while (i < n && !endsName(html.charCodeAt(i))) i++;
  const anchor = i === at + 2 && (html.charCodeAt(at + 1) | 0x20) === 0x61; // a or A
  const tag: StartTag = { href: undefined, optOut: undefined, end: n, closed: false };
  for (;;) {
    while (i < n && (isWs(html.charCodeAt(i)) || html.charCodeAt(i) === SLASH)) i++;
    if (i >= n) return tag;
    if (html.charCodeAt(i) === GT) {
      tag.end = i + 1;
      tag.closed = true;
      return tag;
    }
    // An attribute name may start with `=`; it ends at whitespace, `/`, `>` or `=`.
    const nameStart = i++;
    while (i < n && !endsName(html.charCodeAt(i)) && html.charCodeAt(i) !== EQUALS) i++;
    const which = anchor ? anchorAttribute(html.slice(nameStart, i)) : undefined;
    let start = i;
    let end = i;
    let j = i;
    while (j < n && isWs(html.charCodeAt(j))) j++;
    if (html.charCodeAt(j) === EQUALS) {
      j++;
      while (j < n && isWs(html.charCodeAt(j))) j++;
      const quote = html.charCodeAt(j);
      if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
        const close = html.indexOf(quote === DOUBLE_QUOTE ? '"' : "'", j + 1);
        if (close === -1) return tag;
        [start, end, i] = [j + 1, close, close + 1];
      } else {
        end = j;
        while (end < n && !isWs(html.charCodeAt(end)) && html.charCodeAt(end) !== GT) end++;
        [start, i] = [j, end];
      }
    }
    if (which !== undefined && tag[which] === undefined) tag[which] = { value: html.slice(start, end), start, end };
  }
}

function anchorAttribute(name: string): 'href' | 'optOut' | undefined {
  const lower = name.toLowerCase();
  return lower === 'href' ? 'href' : lower === OPT_OUT_ATTRIBUTE ? 'optOut' : undefined;
}

/** Before the last `</body>`, or at the end of an HTML fragment without one. */
function insertBeforeBodyEnd(html: string, fragment: string): string {
  let last = -1;
  for (const m of html.matchAll(/<\/body[\s/>]/gi)) last = m.index;
  return last === -1 ? html + fragment : html.slice(0, last) + fragment + html.slice(last);
}
