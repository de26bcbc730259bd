import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import { clientKey } from '../domain/client-key.js';

type Connection = SMTPServer['connections'] extends Set<infer C> ? C : never;

/**
 * How a listener's connections share its slots. Every connection starts "setting up" (submission: until it has
 * done STARTTLS and AUTH; the report listener: until it starts a message's DATA) in a pool of its own, so that
 * strangers, who can never finish setting up, fill only that pool and never the slots of the clients who did.
 */
export interface SlotLimits {
  /** Connections setting up at once, from everyone together. */
  settingUp: number;
  /** Connections past setting up at once; one more is answered 421 where it would pass. */
  established: number;
  /** Connections one client address (an IPv6 /64) may hold at once: while setting up, or also after (`perAddressCounts`). */
  perAddress: number;
  /** `setup`: authenticated connections do not count against their address (submission); `all`: every connection does. */
  perAddressCounts: 'setup' | 'all';
  /** How long a connection may take to set up (again with `rearm`); then it is answered 421 and closed. */
  setupMs: number;
  /** The 421's text at the deadline, with its enhanced code: what the client failed to do in time. */
  tooSlow: string;
}

interface Entry {
  connection: Connection;
  key: string;
  established: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The slots of one SMTP listener: `onConnect` and `onClose` are smtp-server's hooks, `establish` is called when
 * a connection has set up and `rearm` when it must set up again (the report listener, between messages).
 *
 * A connection past its address's cap is refused 421. When the setting-up pool is full, a new connection is not
 * refused: the connection that has been setting up the longest is closed instead (421), as it has had the most
 * time to finish. Strangers holding connections open therefore cannot keep a real client out; to push it out
 * before it authenticates they must open connections faster than it sets up (a few hundred milliseconds), a
 * flood rather than a handful of idle sockets, and each of them is gone within `setupMs` anyway.
 */
export function createSlots(server: () => SMTPServer, limits: SlotLimits) {
  const entries = new Map<string, Entry>();
  /** Entries setting up, oldest first (a Set keeps insertion order). */
  const settingUp = new Set<Entry>();
  const perAddress = new Map<string, number>();
  let established = 0;

  const counts = (e: Entry) => !e.established || limits.perAddressCounts === 'all';
  const uncount = (e: Entry) => {
    const n = (perAddress.get(e.key) ?? 1) - 1;
    if (n > 0) perAddress.set(e.key, n);
    else perAddress.delete(e.key);
  };
  const arm = (e: Entry) => {
    clearTimeout(e.timer);
    e.timer = setTimeout(() => close(e, limits.tooSlow), limits.setupMs);
    e.timer.unref();
  };
  const release = (e: Entry) => {
    if (entries.get(e.connection.session.id) !== e) return;
    entries.delete(e.connection.session.id);
    clearTimeout(e.timer);
    settingUp.delete(e);
    if (e.established) established -= 1;
    if (counts(e)) uncount(e);
  };
  /** Answers 421 (smtp-server then closes the connection) and frees its slot at once, not when its socket is gone. */
  const close = (e: Entry, text: string) => {
    release(e);
    e.connection.send(421, text, false);
  };

  return {
    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
      const key = clientKey(session.remoteAddress);
      if ((perAddress.get(key) ?? 0) >= limits.perAddress) {
        return callback(
          Object.assign(
            new Error(`4.7.0 too many connections from your address (${limits.perAddress}), try again later`),
            { responseCode: 421 },
          ),
        );
      }
      const connection = [...server().connections].find((c) => c.session === session);
      // Gone while it waited for this hook (smtp-server forgets a connection as soon as it closes).
      if (!connection) return callback(Object.assign(new Error('4.4.2 connection closed'), { responseCode: 421 }));
      if (settingUp.size >= limits.settingUp) {
        const oldest = settingUp.values().next().value!;
        close(oldest, '4.7.0 too many connections waiting; this one has waited the longest, closing');
      }
      const entry: Entry = { connection, key, established: false, timer: undefined };
      entries.set(session.id, entry);
      settingUp.add(entry);
      perAddress.set(key, (perAddress.get(key) ?? 0) + 1);
      arm(entry);
      callback();
    },

    /** The connection has set up: it leaves the setting-up pool for the established one. False when that is full. */
    establish(session: SMTPServerSession): boolean {
      const e = entries.get(session.id);
      if (!e) return false;
      clearTimeout(e.timer);
      e.timer = undefined;
      if (e.established) return true;
      if (established >= limits.established) return false;
      settingUp.delete(e);
      e.established = true;
      established += 1;
      if (!counts(e)) uncount(e);
      return true;
    },

    /** The connection must set up again within the deadline (it keeps its established slot meanwhile). */
    rearm(session: SMTPServerSession): void {
      const e = entries.get(session.id);
      if (e) arm(e);
    },

    onClose(session: SMTPServerSession): void {
      const e = entries.get(session.id);
      if (e) release(e);
    },
  };
}

/** A deadline as a reply states it. */
export const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
