import fs from 'node:fs';
import type { EgressRules } from '../../domain/entities/egress.js';
import { loadEgressRules, type LoadedRules } from './rules-file.js';

/** How often the rules file's modification time and size are looked at. */
export const RULES_CHECK_MS = 2000;

/** The rules in force, as the shaper reads them on every decision. */
export interface EgressRulesSource {
  current(): EgressRules;
  /** The file read (the built-in one when MAILER_EGRESS_RULES is unset). */
  readonly path: string;
  /** Why the file last read was refused (the rules in force are then the ones before); null when it parsed. */
  error(): string | null;
  /** Looks at the file now: re-reads it when its modification time or size changed (or `force`). */
  check(force?: boolean): void;
  close(): void;
}

export interface EgressRulesSourceOptions {
  /** MAILER_EGRESS_RULES; undefined: the built-in config/egress-rules.toml. */
  path: string | undefined;
  /** MAILER_EGRESS_POOLS. */
  poolsSetting: string | undefined;
  /** MAILER_HOSTNAME: the EHLO name of a source address that gives none. */
  defaultEhlo?: string;
  /** A pino logger will do. */
  logger: Record<'info' | 'error', (obj: object, msg: string) => void>;
  /** Every how many ms the file is looked at (default 2 s); 0: only by check() and SIGHUP. */
  checkEveryMs?: number;
  /** Re-read on SIGHUP (default true): the usual way to tell a daemon its configuration changed. */
  sighup?: boolean;
}

const stamp = (path: string): string => {
  try {
    const st = fs.statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return 'missing';
  }
};

/**
 * Holds the rules in force and re-reads the file when it changes, without a restart: its modification time,
 * size (and inode, for editors that replace the file) are looked at every 2 s, and SIGHUP re-reads it at once.
 * A file that does not parse keeps the rules in force (the error logged and answered by error()); at start,
 * with nothing in force yet, the built-in rules are (loadEgressRules).
 */
export function createEgressRulesSource(options: EgressRulesSourceOptions): EgressRulesSource {
  const { logger } = options;
  const read = (): LoadedRules => loadEgressRules(options.path, options.poolsSetting, options.defaultEhlo);
  const first = read();
  const path = first.path;
  let rules = first.rules;
  let error = first.error;
  let seen = stamp(path);
  if (error) logger.error({ path, error }, 'egress rules file refused: the built-in rules are in force');

  const check = (force = false): void => {
    const now = stamp(path);
    if (!force && now === seen) return;
    seen = now;
    const next = read();
    if (next.error) {
      if (next.error !== error)
        logger.error({ path, error: next.error }, 'egress rules file refused: the rules in force are kept');
      error = next.error;
      return;
    }
    rules = next.rules;
    error = null;
    logger.info({ path, sites: rules.sites.length, pools: rules.pools.length }, 'egress rules reloaded');
  };

  const every = options.checkEveryMs ?? RULES_CHECK_MS;
  const timer = every > 0 ? setInterval(() => check(), every) : null;
  timer?.unref();
  const onHup = () => check(true);
  if (options.sighup ?? true) process.on('SIGHUP', onHup);

  return {
    current: () => rules,
    path,
    error: () => error,
    check,
    close() {
      if (timer) clearInterval(timer);
      process.off('SIGHUP', onHup);
    },
  };
}
