import fs from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parse, TomlDate, TomlError } from 'smol-toml';
import type {
  AutomationRule,
  EgressAction,
  EgressPool,
  EgressRules,
  SiteGrouping,
  SiteRule,
  SiteShape,
  SourceAddress,
  WarmupPlan,
} from '../../domain/entities/egress.js';
import { DURATION_FORMAT, parseDuration } from './durations.js';
import { EgressRulesError } from './egress-rules-error.js';
import { EGRESS_NAME, EHLO_NAME, parsePoolsSetting } from './pools-setting.js';
import { parseRate, RATE_FORMAT } from './rate.js';
import { MX_GLOB } from './site-grouping.js';

export { EgressRulesError } from './egress-rules-error.js';

/**
 * The built-in rules file, shipped beside the code: `config/egress-rules.toml` at the root of the checkout,
 * and of the image (the Dockerfile copies config/; this file is src/delivery/egress/ there as here).
 */
export const BUILT_IN_RULES_PATH = fileURLToPath(new URL('../../../config/egress-rules.toml', import.meta.url));

/** Every site's shape when the file's [default] does not say: 3 connections, 100 messages each, no rate. */
export const DEFAULT_SHAPE: SiteShape = { connectionLimit: 3, messagesPerConnection: 100, rate: null };

/** No sites, no rules, no pools: what is in force when not even the built-in file can be read. */
export const EMPTY_RULES: EgressRules = {
  siteGrouping: 'mx-domain',
  defaults: DEFAULT_SHAPE,
  automation: [],
  sites: [],
  pools: [],
};

type Table = Record<string, unknown>;

const isTable = (v: unknown): v is Table =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof TomlDate);

const fail = (key: string, message: string): never => {
  throw new EgressRulesError(`${key}: ${message}`);
};

/** Refuses keys the format does not have, naming the first. */
function onlyKeys(table: Table, at: string, allowed: readonly string[]): void {
  for (const key of Object.keys(table)) {
    if (!allowed.includes(key)) {
      fail(at === '' ? key : `${at}.${key}`, `unknown key (allowed here: ${allowed.join(', ')})`);
    }
  }
}

function table(value: unknown, key: string): Table {
  return isTable(value) ? value : fail(key, 'must be a table');
}

function string(value: unknown, key: string): string {
  return typeof value === 'string' ? value : fail(key, 'must be a string');
}

function strings(value: unknown, key: string): string[] {
  if (!Array.isArray(value)) return fail(key, 'must be an array of strings');
  return value.map((v, i) => string(v, `${key}[${i}]`));
}

function positiveInteger(value: unknown, key: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    return fail(key, `must be a whole number from 1 to ${max}`);
  }
  return value;
}

function rate(value: unknown, key: string) {
  const parsed = parseRate(string(value, key));
  return parsed ?? fail(key, `"${String(value)}" is not a rate: ${RATE_FORMAT}`);
}

function duration(value: unknown, key: string): number {
  const parsed = parseDuration(string(value, key));
  return parsed ?? fail(key, `"${String(value)}" is not a duration: ${DURATION_FORMAT}`);
}

function shape(t: Table, at: string): Partial<SiteShape> {
  const out: Partial<SiteShape> = {};
  if (t.connection_limit !== undefined) {
    out.connectionLimit = positiveInteger(t.connection_limit, `${at}connection_limit`, 1000);
  }
  if (t.messages_per_connection !== undefined) {
    out.messagesPerConnection = positiveInteger(t.messages_per_connection, `${at}messages_per_connection`, 100_000);
  }
  if (t.rate !== undefined) out.rate = rate(t.rate, `${at}rate`);
  return out;
}

const ACTIONS = ['throttle', 'suspend', 'suspend-source', 'bounce'] as const;

function automationRule(value: unknown, at: string): AutomationRule {
  const t = table(value, at);
  onlyKeys(t, at, ['match', 'action', 'rate', 'duration']);
  const pattern = string(t.match ?? fail(`${at}.match`, 'missing'), `${at}.match`);
  try {
    new RegExp(pattern, 'i');
  } catch (err) {
    fail(`${at}.match`, `not a regular expression: ${(err as Error).message}`);
  }
  const kind = string(t.action ?? fail(`${at}.action`, 'missing'), `${at}.action`);
  let action: EgressAction;
  switch (kind) {
    case 'throttle':
      action = {
        kind,
        rate: rate(t.rate ?? fail(`${at}.rate`, 'missing (a throttle says the rate)'), `${at}.rate`),
        durationMs: duration(t.duration ?? fail(`${at}.duration`, 'missing'), `${at}.duration`),
      };
      break;
    case 'suspend':
    case 'suspend-source':
      if (t.rate !== undefined) fail(`${at}.rate`, `only a throttle has a rate`);
      action = { kind, durationMs: duration(t.duration ?? fail(`${at}.duration`, 'missing'), `${at}.duration`) };
      break;
    case 'bounce':
      if (t.rate !== undefined) fail(`${at}.rate`, 'only a throttle has a rate');
      if (t.duration !== undefined) fail(`${at}.duration`, 'a bounce has no duration');
      action = { kind };
      break;
    default:
      return fail(`${at}.action`, `"${kind}" is not an action (${ACTIONS.join(', ')})`);
  }
  return { pattern, action };
}

function automation(value: unknown, at: string): AutomationRule[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return fail(at, 'must be an array of tables ([[...automation]])');
  return value.map((rule, i) => automationRule(rule, `${at}[${i}]`));
}

function name(value: string, key: string): string {
  return EGRESS_NAME.test(value) ? value : fail(key, 'a name is letters, digits, . _ - (at most 100)');
}

function sites(value: unknown): SiteRule[] {
  if (value === undefined) return [];
  const all = table(value, 'site');
  return Object.entries(all).map(([siteName, v]) => {
    const at = `site.${siteName}`;
    name(siteName, at);
    const t = table(v, at);
    onlyKeys(t, at, ['mx', 'connection_limit', 'messages_per_connection', 'rate', 'automation']);
    const mx = strings(t.mx ?? fail(`${at}.mx`, 'missing (the MX host names of the site)'), `${at}.mx`);
    if (mx.length === 0) fail(`${at}.mx`, 'names no MX host');
    mx.forEach((glob, i) => {
      if (!MX_GLOB.test(glob)) fail(`${at}.mx[${i}]`, `"${glob}" is not a host name or *.name`);
    });
    return {
      name: siteName,
      mx: mx.map((g) => g.toLowerCase()),
      shape: shape(t, `${at}.`),
      automation: automation(t.automation, `${at}.automation`),
    };
  });
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function day(value: unknown, key: string): string {
  // A bare TOML date (start = 2026-11-28) is as good as the quoted one.
  const text = value instanceof TomlDate && value.isDate() ? value.toISOString().slice(0, 10) : value;
  const s = string(text, key);
  const m = DAY.exec(s);
  const d = m ? new Date(`${s}T00:00:00Z`) : null;
  if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== s) {
    return fail(key, `"${s}" is not a date (YYYY-MM-DD)`);
  }
  return s;
}

function warmup(value: unknown, at: string): WarmupPlan | null {
  if (value === undefined) return null;
  const t = table(value, at);
  onlyKeys(t, at, ['start', 'daily']);
  const start = day(t.start ?? fail(`${at}.start`, 'missing'), `${at}.start`);
  const daily = t.daily ?? fail(`${at}.daily`, 'missing');
  if (!Array.isArray(daily) || daily.length === 0) return fail(`${at}.daily`, 'must be a non-empty array of counts');
  return {
    start,
    daily: daily.map((n, i) =>
      typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 100_000_000
        ? n
        : fail(`${at}.daily[${i}]`, 'must be a whole number, 0 or more'),
    ),
  };
}

function pools(value: unknown, defaultEhlo: string): EgressPool[] {
  if (value === undefined) return [];
  const all = table(value, 'pool');
  return Object.entries(all).map(([poolName, v]) => {
    const at = `pool.${poolName}`;
    name(poolName, at);
    const t = table(v, at);
    onlyKeys(t, at, ['streams', 'accounts', 'source']);
    const list = t.source ?? fail(`${at}.source`, 'missing ([[pool.<name>.source]] with an address)');
    if (!Array.isArray(list) || list.length === 0) return fail(`${at}.source`, 'must be a non-empty array of tables');
    const seen = new Set<string>();
    const sources = list.map((s, i): SourceAddress => {
      const sat = `${at}.source[${i}]`;
      const st = table(s, sat);
      onlyKeys(st, sat, ['address', 'ehlo', 'warmup']);
      const address = string(st.address ?? fail(`${sat}.address`, 'missing'), `${sat}.address`);
      if (isIP(address) === 0) fail(`${sat}.address`, `"${address}" is not an IP address`);
      if (seen.has(address)) fail(`${sat}.address`, `${address} is listed twice in the pool`);
      seen.add(address);
      const ehlo = st.ehlo === undefined ? defaultEhlo : string(st.ehlo, `${sat}.ehlo`);
      if (!EHLO_NAME.test(ehlo)) fail(`${sat}.ehlo`, `"${ehlo}" is not a host name`);
      return { address, ehlo: ehlo.toLowerCase(), warmup: warmup(st.warmup, `${sat}.warmup`) };
    });
    return {
      name: poolName,
      sources,
      streams: t.streams === undefined ? [] : strings(t.streams, `${at}.streams`),
      accounts: t.accounts === undefined ? [] : strings(t.accounts, `${at}.accounts`),
    };
  });
}

/**
 * Parses and checks a rules file (format: docs/deliverability.md "Egress shaping"), with the pools of
 * MAILER_EGRESS_POOLS (`poolsSetting`) added beside the file's. Anything the format does not allow refuses
 * the file as a whole: EgressRulesError naming the key. `defaultEhlo` is the EHLO name of a source address
 * that gives none (MAILER_HOSTNAME; the machine's name when not given, as MAILER_HOSTNAME's default is).
 */
export function parseEgressRules(
  text: string,
  poolsSetting?: string,
  defaultEhlo: string = os.hostname().toLowerCase(),
): EgressRules {
  let doc: Table;
  try {
    doc = parse(text) as Table;
  } catch (err) {
    if (err instanceof TomlError) {
      throw new EgressRulesError(`line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}`);
    }
    throw err;
  }
  onlyKeys(doc, '', ['site_grouping', 'default', 'automation', 'site', 'pool']);
  let siteGrouping: SiteGrouping = 'mx-domain';
  if (doc.site_grouping !== undefined) {
    const g = string(doc.site_grouping, 'site_grouping');
    if (g !== 'mx-domain' && g !== 'mx-host') fail('site_grouping', `"${g}" is not "mx-domain" or "mx-host"`);
    siteGrouping = g as SiteGrouping;
  }
  let defaults = DEFAULT_SHAPE;
  if (doc.default !== undefined) {
    const t = table(doc.default, 'default');
    onlyKeys(t, 'default', ['connection_limit', 'messages_per_connection', 'rate']);
    defaults = { ...DEFAULT_SHAPE, ...shape(t, 'default.') };
  }
  const filePools = pools(doc.pool, defaultEhlo);
  const settingPools = parsePoolsSetting(poolsSetting, defaultEhlo);
  for (const p of settingPools) {
    if (filePools.some((f) => f.name === p.name)) {
      fail(`pool.${p.name}`, 'also named in MAILER_EGRESS_POOLS: a pool is defined in one place');
    }
  }
  return {
    siteGrouping,
    defaults,
    automation: automation(doc.automation, 'automation'),
    sites: sites(doc.site),
    pools: [...filePools, ...settingPools],
  };
}

/** The rules file as read: its rules, its path, and why it was refused (null when it parses). */
export interface LoadedRules {
  rules: EgressRules;
  path: string;
  error: string | null;
}

/**
 * Reads and parses the rules file at `path` (undefined: the built-in config/egress-rules.toml). A file that
 * cannot be read or parsed answers its error, with the built-in rules (or, should those fail too, none) as
 * `rules`: the caller that already has rules in force keeps them instead (rules-source.ts).
 */
export function loadEgressRules(
  path: string | undefined,
  poolsSetting: string | undefined,
  defaultEhlo?: string,
): LoadedRules {
  const file = path ?? BUILT_IN_RULES_PATH;
  try {
    return {
      rules: parseEgressRules(fs.readFileSync(file, 'utf8'), poolsSetting, defaultEhlo),
      path: file,
      error: null,
    };
  } catch (err) {
    const error = errorText(err);
    let rules = EMPTY_RULES;
    if (file !== BUILT_IN_RULES_PATH) {
      const builtIn = readBuiltIn();
      for (const pools of [poolsSetting, undefined]) {
        try {
          rules = parseEgressRules(builtIn, pools, defaultEhlo);
          break;
        } catch {
          // The setting's own error is the one reported; the built-in file is tested to parse.
        }
      }
    }
    return { rules, path: file, error };
  }
}

function readBuiltIn(): string {
  try {
    return fs.readFileSync(BUILT_IN_RULES_PATH, 'utf8');
  } catch {
    return '';
  }
}

function errorText(err: unknown): string {
  if (err instanceof EgressRulesError) return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'the file does not exist';
  if (e.code === 'EACCES') return 'the file cannot be read (permission denied)';
  return e.message ?? String(err);
}
