import { clientKey } from '../domain/client-key.js';
import { AppError } from '../errors.js';

// How a client address is counted (an IPv6 one by its /64): one definition with the SMTP listeners' caps.
export { clientKey };

/**
 * Failed admin-token attempts, counted per client address and for the whole process. Only failures are
 * throttled: a request with the right token is checked and accepted whatever came before it from its
 * address or from anyone (auth-service.ts checks the token first), so no number of wrong guesses, not even
 * from the address every client shares behind a reverse proxy, can lock the operator out. A wrong token from
 * a client past its limit, or from anyone once all clients together are past the global limit, is answered
 * 429 with the time left in the window instead of 401: clients that honour Retry-After back off, and the
 * answer tells a guesser nothing a 401 would not. What makes guessing hopeless is the token's length (at
 * least 32 characters, see ADMIN_TOKEN_MIN_LENGTH), not this throttle. Counts are kept in this process only,
 * like the API rate limit.
 */
export interface ThrottleLimits {
  /** Failures one client may make in a window before its further failures are answered 429. */
  perClient: number;
  /** Failures all clients together may make in a window before every further failure is answered 429. */
  global: number;
  windowMs: number;
}

export const ADMIN_AUTH_LIMITS: ThrottleLimits = { perClient: 20, global: 200, windowMs: 60_000 };

/** Expired windows are dropped once this many clients are tracked. */
const PRUNE_ABOVE = 1_000;

interface Window {
  failures: number;
  endsAt: number;
}

export function createAuthThrottle(limits: ThrottleLimits = ADMIN_AUTH_LIMITS, now: () => number = Date.now) {
  const clients = new Map<string, Window>();
  let global: Window = { failures: 0, endsAt: 0 };

  const current = (w: Window | undefined, t: number) => (w && w.endsAt > t ? w : undefined);
  const tooMany = (w: Window, t: number, who: string) => {
    const retryAfterSeconds = Math.max(1, Math.ceil((w.endsAt - t) / 1000));
    return new AppError(
      'rate_limited',
      `Too many failed admin token attempts ${who}; retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  };

  return {
    /**
     * Counts a wrong token from `client`. Returns the 429 to answer it with when this failure is past the
     * client's limit or the global one, else undefined (answer 401).
     */
    failed(client: string): AppError | undefined {
      const t = now();
      global = current(global, t) ?? { failures: 0, endsAt: t + limits.windowMs };
      global.failures += 1;
      const key = clientKey(client);
      let mine = current(clients.get(key), t);
      // Past the global limit every failure is refused anyway: new clients are no longer tracked, so that
      // guesses from ever new addresses cannot grow the map within a window.
      if (mine === undefined && global.failures <= limits.global) {
        if (clients.size > PRUNE_ABOVE) for (const [k, w] of clients) if (w.endsAt <= t) clients.delete(k);
        mine = { failures: 0, endsAt: t + limits.windowMs };
        clients.set(key, mine);
      }
      if (mine) {
        mine.failures += 1;
        if (mine.failures > limits.perClient) return tooMany(mine, t, 'from this address');
      }
      if (global.failures > limits.global) return tooMany(global, t, 'on this server');
      return undefined;
    },

    /** How many client addresses are being counted (bounded by the global limit per window). */
    trackedClients: (): number => clients.size,
  };
}
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;
