import { invalid } from '../errors.js';

/**
 * An account's branding of its unsubscribe page (docs/unsubscribe.md): a name and a logo, set by operators.
 * The OpenAPI document states these same rules (openapi-constraints.ts), so every request its schema allows is
 * accepted.
 */
export const BRAND_NAME_MAX = 100;
export const BRAND_LOGO_URL_MAX = 2048;
/** Printable characters only: a name is one line of text on a page. */
export const BRAND_NAME_PATTERN = /^[^\x00-\x1f\x7f]*$/;
/**
 * https only (the page loads nothing over plain HTTP, and its CSP allows no other image), a host name, an
 * optional port and path, in RFC 3986's characters: no space, quote or angle bracket, so the URL is a plain
 * attribute value however it is written (it is escaped as well).
 */
export const BRAND_LOGO_URL_PATTERN =
  /^https:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~:/?#[\]@!$&'()*+,;=%-]*)?$/;

/** Characters as the database and JSON Schema count them (code points). */
const length = (s: string) => [...s].length;

/**
 * A branding change as stored: undefined leaves a field as it is, `""` (or a name of spaces only) clears it
 * (null), anything else is checked; a bad value is a 400 naming the field.
 */
export function brandingPatch(patch: { brandName?: string; brandLogoUrl?: string }): {
  brandName?: string | null;
  brandLogoUrl?: string | null;
} {
  const out: { brandName?: string | null; brandLogoUrl?: string | null } = {};
  if (patch.brandName !== undefined) {
    if (!BRAND_NAME_PATTERN.test(patch.brandName))
      throw invalid('brand_name: must not contain line breaks or control characters');
    if (length(patch.brandName) > BRAND_NAME_MAX)
      throw invalid(
        `brand_name: length ${length(patch.brandName)} exceeds the maximum of ${BRAND_NAME_MAX} characters`,
      );
    const name = patch.brandName.trim();
    out.brandName = name === '' ? null : name;
  }
  if (patch.brandLogoUrl !== undefined) {
    if (patch.brandLogoUrl === '') out.brandLogoUrl = null;
    else {
      if (length(patch.brandLogoUrl) > BRAND_LOGO_URL_MAX)
        throw invalid(`brand_logo_url: length exceeds the maximum of ${BRAND_LOGO_URL_MAX} characters`);
      if (!BRAND_LOGO_URL_PATTERN.test(patch.brandLogoUrl))
        throw invalid('brand_logo_url: must be an https:// URL (a host name, an optional port and path)');
      out.brandLogoUrl = patch.brandLogoUrl;
    }
  }
  return out;
}
