/** What the server tells the page at load (in index.html's meta tags). */

/** The service's external URL (MAILER_PUBLIC_URL), which API clients use; the page's origin may differ. */
export const publicUrl = (document.querySelector('meta[name="mailer-public-url"]')?.content || location.origin).replace(
  /\/$/,
  '',
);
