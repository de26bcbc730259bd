/**
 * Hash routing (#/accounts/acc_1/emails?status=sent): the server serves one page at /console, and a
 * reload or a shared link lands on the same view.
 */

/** The current location as {path, query}. */
export function currentRoute() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, search = ''] = hash.split('?');
  return { path, query: Object.fromEntries(new URLSearchParams(search)) };
}

/** A hash link: href('/accounts/x', {page: 2}) is '#/accounts/x?page=2'; empty query values are dropped. */
export function href(path, query = {}) {
  const params = new URLSearchParams(
    Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''),
  );
  const search = params.toString();
  return `#${path}${search ? `?${search}` : ''}`;
}

export function navigate(path, query) {
  location.hash = href(path, query);
}

/**
 * Matches `path` against patterns like '/accounts/:id/:tab'; answers {route, params} or undefined.
 * Parameters are decoded, so ids reach the pages as the API wrote them.
 */
export function matchRoute(routes, path) {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    const pattern = route.pattern.split('/').filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params = {};
    const ok = pattern.every((p, i) => {
      if (p.startsWith(':')) {
        params[p.slice(1)] = decodeURIComponent(parts[i]);
        return true;
      }
      return p === parts[i];
    });
    if (ok) return { route, params };
  }
  return undefined;
}
