/**
 * How stored bytes of inbound mail are handed out over HTTP (GET /inbound/emails/:id/raw and /attachments/:n).
 * Those bytes, their content type and their file name come from strangers, and the API's origin also serves
 * the console: a text/html or SVG attachment rendered there would run a stranger's script with the console's
 * origin. So every such answer is a download (Content-Disposition: attachment), never sniffed (nosniff), under a
 * CSP that runs nothing even if a browser rendered it; a type a browser would render as a document or script is
 * answered as application/octet-stream; the file name is reduced to what a header can carry without breaking.
 */

/** A type/subtype of RFC 2045 token characters, nothing else (no parameters: a stranger's charset is not needed). */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,128}$/;

/**
 * Types a browser renders as an active document or runs as script (HTML, XML and its dialects such as SVG and
 * XHTML, JavaScript, PDF with its scripts, multipart which some browsers render part by part).
 */
const ACTIVE =
  /^(text\/(html|xml|xsl|javascript|ecmascript|css|vtt|x-.*)|application\/(.*\+xml|xml|xhtml.*|javascript|ecmascript|x-javascript|pdf|x-shockwave-flash|wasm)|image\/svg.*|multipart\/.*|message\/(?!rfc822$).*)$/;

export const RAW_MESSAGE_TYPE = 'message/rfc822';

/**
 * The content type to answer stored bytes with: the declared one, lower-cased and without parameters, when it
 * is well formed and not one a browser would render actively; application/octet-stream otherwise.
 */
export function servedContentType(declared: string): string {
  const type = (declared.split(';')[0] ?? '').trim().toLowerCase();
  if (!MEDIA_TYPE.test(type) || ACTIVE.test(type)) return 'application/octet-stream';
  return type;
}

/**
 * A file name safe in a header and on a disk: no path (the last segment only), no control characters, quotes,
 * backslashes or characters file systems refuse, no leading dots, at most 200 characters; `fallback` when
 * nothing is left.
 */
export function safeFilename(name: string | null, fallback: string): string {
  const last = (name ?? '').split(/[/\\]/).pop() ?? '';
  const cleaned = last
    .replace(/[\u0000-\u001f\u007f-\u009f"*:<>?|\u2028\u2029]/g, '')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 200);
  return cleaned === '' ? fallback : cleaned;
}

/**
 * Content-Disposition: attachment with the name twice (RFC 6266): `filename` in printable ASCII (others as
 * `_`) for old clients, `filename*` percent-encoded UTF-8 for the rest.
 */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The headers every answer of stranger's bytes carries besides its type and disposition. */
export const UNTRUSTED_CONTENT_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'private, no-store',
} as const;
