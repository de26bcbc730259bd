import { AppError } from '../errors.js';

/**
 * Failed admin-token attempts, counted per client address and for the whole process. A client that fails
 * too often in a window is refused with 429 until that window ends, whatever it sends (with the right
 * token too, or the answer would tell a guesser when it hit); past the global limit every client is.
 * The global limit is what holds against guessing from many addresses, at the price that such an attack
 * also locks the operator out until it stops. Counts are kept in this process only, like the API rate limit.
 */
export interface ThrottleLimits {
  /** Failures one client may make in a window. */
  perClient: number;
  /** Failures all clients together may make in a window. */
  global: number;
  windowMs: number;
}

export const ADMIN_AUTH_LIMITS: ThrottleLimits = { perClient: 20, global: 200, windowMs: 60_000 };

/** Expired windows are dropped once this many clients are tracked (the global limit bounds how fast it grows). */
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
    return new AppError('rate_limited', `Too many failed admin token attempts ${who}; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
  };

  return {
    /** Throws a 429 saying when to retry when `client`, or everyone, has failed too often in the current window. */
    check(client: string): void {
      const t = now();
      const mine = current(clients.get(clientKey(client)), t);
      if (mine && mine.failures >= limits.perClient) throw tooMany(mine, t, 'from this address');
      const all = current(global, t);
      if (all && all.failures >= limits.global) throw tooMany(all, t, 'on this server');
    },

    failed(client: string): void {
      const t = now();
      if (clients.size > PRUNE_ABOVE) for (const [k, w] of clients) if (w.endsAt <= t) clients.delete(k);
      const key = clientKey(client);
      const mine = current(clients.get(key), t) ?? { failures: 0, endsAt: t + limits.windowMs };
      mine.failures += 1;
      clients.set(key, mine);
      global = current(global, t) ?? { failures: 0, endsAt: t + limits.windowMs };
      global.failures += 1;
    },

    /** The operator got it right: their earlier typos stop counting against their address. */
    succeeded(client: string): void {
      clients.delete(clientKey(client));
    },
  };
}
export type AuthThrottle = ReturnType<typeof createAuthThrottle>;

/**
 * What a client is counted as: an IPv4 address (also when IPv4-mapped), or an IPv6 address's /64, since one
 * host commonly holds a whole /64 and could otherwise try from a fresh address each time.
 */
export function clientKey(address: string): string {
  const plain = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(':')) return plain;
  const [head = '', tail] = plain.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}
