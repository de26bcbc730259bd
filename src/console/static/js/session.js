/**
 * Who is signed in, as the service answers GET /console/session: the operator (signed in with the admin token)
 * or an account (signed in with one of its API keys of permission `all`). The credential itself is never kept
 * by the page: the session is an HttpOnly cookie the browser sends and no script can read. The CSRF token that
 * every API call must echo in X-CSRF-Token is kept here, in memory only (a reload asks for it again).
 */
const SESSION_PATH = '/console/session';

export class ApiError extends Error {
  constructor(status, error, message) {
    super(message || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

/** A fetch that answers an ApiError for a network failure. */
export async function send(url, init) {
  try {
    return await fetch(url, { ...init, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network error', 'The service did not answer. Is it running?');
  }
}

/** An answer's JSON, or its `{error, message}` thrown as an ApiError. */
export async function readJson(res) {
  const text = await res.text();
  let json;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    json = { error: `HTTP ${res.status}`, message: text.slice(0, 200) };
  }
  if (!res.ok) throw new ApiError(res.status, json.error, json.message);
  return json;
}

/** {kind: 'operator' | 'account', account?: {id, name}, csrf_token, expires_at}, or null when signed out. */
let current = null;

export const session = {
  /** Asks the service who the cookie signs in (once at start); signed out when it signs in no one. */
  async load() {
    // {kind: null} when no one is signed in (no cookie, or its session ended).
    const answer = await readJson(await send(SESSION_PATH, { method: 'GET' }));
    current = answer.kind ? answer : null;
    return current;
  },
  signedIn: () => current !== null,
  isOperator: () => current?.kind === 'operator',
  /** The account an account session acts for ({id, name}); undefined for the operator. */
  account: () => current?.account,
  csrfToken: () => current?.csrf_token,
  /** The first page after signing in: the operator's accounts, or the account's own overview. */
  home: () => (current?.kind === 'account' ? `/accounts/${current.account.id}` : '/accounts'),
  /** Signs in with the admin token or an API key (throws the service's refusal as an ApiError). */
  async signIn(token) {
    current = await readJson(
      await send(SESSION_PATH, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      }),
    );
    return current;
  },
  /** Ends the session on the service (its cookie cleared), then here. */
  async signOut() {
    const csrf = current?.csrf_token;
    current = null;
    await readJson(await send(SESSION_PATH, { method: 'DELETE', headers: csrf ? { 'x-csrf-token': csrf } : {} }));
  },
  /** Forgets the session here only: the service already refused it. */
  forget() {
    current = null;
  },
};
