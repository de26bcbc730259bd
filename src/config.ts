import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseCidr } from './cidr.js';
import { BODY_LIMITS } from './domain/limits.js';
import { parseEncryptionKey } from './domain/encryption-key-text.js';

/**
 * The only reader of the environment. Every setting is declared once with its variable, a description
 * and a default, so that `describeConfig()` (and the README table) documents itself.
 */

export type Role = 'all' | 'api' | 'worker';
export type DeliveryMode = 'catcher' | 'relay' | 'direct';
export type LogFormat = 'json' | 'pretty';
export type LogFormatSetting = LogFormat | 'auto';

interface Setting<T> {
  env: string;
  description: string;
  /** Shown in docs; `undefined` means "unset: an embedded default is used". */
  default: string | undefined;
  parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => T;
}

const str = (fallback: string) => (raw: string | undefined) => (raw === undefined || raw === '' ? fallback : raw);
const optional = (raw: string | undefined) => (raw === undefined || raw === '' ? undefined : raw);
const int =
  (name: string, fallback: number, min = 0, max = 65535) =>
  (raw: string | undefined) => {
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return n;
  };
const flag = (raw: string | undefined) => raw === '1' || raw === 'true';

const defaultPublicUrl = (env: NodeJS.ProcessEnv) =>
  `http://${str('127.0.0.1')(env.HOST)}:${int('PORT', 8080)(env.PORT)}`;

/** A URL setting that links are built from: refused at start unless http(s), rather than making broken links. */
function httpUrl(name: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new Error(`${name} must be an http:// or https:// URL, got "${value}"`);
  return value;
}

/**
 * DATABASE_URL: its `connect_timeout`, when it sets one, must be whole seconds. The driver would take anything
 * else as no limit at all, or none worth having, and the 503 a hung database should give would never come.
 * The message names the parameter, never the URL (it carries the password).
 */
function parseDatabaseUrl(raw: string | undefined): string | undefined {
  const url = optional(raw);
  if (url === undefined || !URL.canParse(url)) return url;
  const timeout = new URL(url).searchParams.get('connect_timeout');
  if (timeout !== null && !(/^\d+$/.test(timeout) && Number(timeout) >= 1 && Number(timeout) <= 3600))
    throw new Error(
      `DATABASE_URL's connect_timeout must be a whole number of seconds from 1 to 3600, got "${timeout}"`,
    );
  return url;
}

/** MAILER_TRUSTED_PROXIES: each entry checked, since a typo would trust nothing, or more than meant, without a word. */
function parseTrustedProxies(raw: string | undefined): string[] {
  const entries = (optional(raw) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of entries) {
    if (parseCidr(entry) === undefined) {
      throw new Error(
        `MAILER_TRUSTED_PROXIES must list IP addresses or CIDR ranges (10.0.0.7, 172.16.0.0/12, fd00::/8) separated by commas; "${entry}" is neither`,
      );
    }
  }
  return entries;
}

const MiB = 1024 * 1024;
/** A key's cap below the largest body (BODY_LIMITS.batch) would refuse a valid batch for ever. */
const bodyMibPerKey = int(
  'MAILER_BODY_MIB_IN_FLIGHT_PER_KEY',
  BODY_LIMITS.batch / MiB,
  BODY_LIMITS.batch / MiB,
  1_048_576,
);

/** The admin token opens everything: long enough that guessing it is hopeless (the generated one is 47). */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

const settings = {
  role: {
    env: 'MAILER_ROLE',
    description:
      'Which parts run in this process: `api` (REST, gRPC, console, tracking, `/metrics` and probes, the inbound report listener, SMTP submission), `worker` (Temporal worker, both outbox dispatchers, the periodic sweep, the built-in catcher), or `all`.',
    default: 'all',
    parse: (raw: string | undefined) => {
      const role = raw === undefined || raw === '' ? 'all' : raw;
      if (role !== 'all' && role !== 'api' && role !== 'worker')
        throw new Error(`MAILER_ROLE must be all, api or worker, got "${role}"`);
      return role as Role;
    },
  } satisfies Setting<Role>,
  host: {
    env: 'HOST',
    description: 'Address the REST gateway and gRPC listen on.',
    default: '127.0.0.1',
    parse: str('127.0.0.1'),
  },
  port: {
    env: 'PORT',
    description: 'REST gateway port (base path /v1/mail).',
    default: '8080',
    parse: int('PORT', 8080),
  },
  grpcPort: {
    env: 'GRPC_PORT',
    description: 'gRPC / gRPC-Web / Connect port (HTTP/2 cleartext).',
    default: '8081',
    parse: int('GRPC_PORT', 8081),
  },
  workerPort: {
    env: 'MAILER_WORKER_PORT',
    description:
      "Port of a worker process's probes on HOST (MAILER_ROLE=worker only: `GET /healthz`, `/readyz`, `/metrics` with the delivery metrics); in `all` the REST port serves them.",
    default: '8082',
    parse: int('MAILER_WORKER_PORT', 8082),
  },
  workerProcess: {
    env: 'MAILER_WORKER_PROCESS',
    description:
      "With MAILER_ROLE=all, `npm start` (and `mailer server start`) runs the worker role in a child process of its own, so that delivery (composing, DKIM signing, SMTP) never holds up the API's event loop: the parent serves the API, starts the child once the database and Temporal are up, restarts it if it dies and stops it when stopping. Its probes and delivery metrics are on MAILER_WORKER_PORT if set, else on a free port the banner shows. `0`: both roles in one process.",
    default: '1',
    parse: (raw: string | undefined) => raw === undefined || raw === '' || flag(raw),
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    description:
      'PostgreSQL connection URL. A new connection not ready within 2 s fails, so a request answers 503 promptly when the database hangs; `?connect_timeout=N` (whole seconds from 1 to 3600, as in libpq) sets another limit for a distant database.',
    default: undefined,
    parse: parseDatabaseUrl,
  },
  temporalAddress: {
    env: 'TEMPORAL_ADDRESS',
    description: 'Temporal frontend host:port.',
    default: undefined,
    parse: optional,
  },
  temporalNamespace: {
    env: 'TEMPORAL_NAMESPACE',
    description: 'Temporal namespace.',
    default: 'default',
    parse: str('default'),
  },
  taskQueue: { env: 'TEMPORAL_TASK_QUEUE', description: 'Temporal task queue.', default: 'mail', parse: str('mail') },
  temporalCliPath: {
    env: 'TEMPORAL_CLI_PATH',
    description: 'Path of the `temporal` CLI used for the embedded dev server.',
    default: undefined,
    parse: optional,
  },
  smtpUrl: {
    env: 'SMTP_URL',
    description: 'Smart host all mail is relayed through in `relay` mode (smtp://user:pass@host:587, smtps://...).',
    default: undefined,
    parse: optional,
  },
  dataDir: {
    env: 'MAILER_DATA_DIR',
    description:
      "Where embedded state lives (PostgreSQL and its `postgres-password`, Temporal, caught mail, the admin token, the encryption key): its owner's only (0700; 0711 when run as root with the embedded PostgreSQL, whose own user passes through it), an existing one open to others made so at start.",
    default: './.data',
    parse: (raw: string | undefined) => path.resolve(raw === undefined || raw === '' ? './.data' : raw),
  },
  adminToken: {
    env: 'MAILER_ADMIN_TOKEN',
    description: `Bearer token of the management API and console; at least ${ADMIN_TOKEN_MIN_LENGTH} characters (a shorter one is refused at start).`,
    default: undefined,
    parse: (raw: string | undefined) => {
      const token = optional(raw);
      if (token !== undefined && token.length < ADMIN_TOKEN_MIN_LENGTH) {
        throw new Error(
          `MAILER_ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters long, got ${token.length}: ` +
            'generate one with `openssl rand -hex 32`, or unset it to have one generated and kept in MAILER_DATA_DIR/admin-token',
        );
      }
      return token;
    },
  },
  metricsToken: {
    env: 'MAILER_METRICS_TOKEN',
    description:
      'When set, `GET /metrics` requires `Authorization: Bearer <token>`; unset, it is open to whoever reaches PORT (firewall it).',
    default: undefined,
    parse: optional,
  },
  publicUrl: {
    env: 'MAILER_PUBLIC_URL',
    description:
      "External URL of the console and the API (the OpenAPI document's server), and of tracking links unless MAILER_TRACKING_URL is set.",
    default: 'http://HOST:PORT',
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => optional(raw) ?? defaultPublicUrl(env),
  },
  consoleSessionHours: {
    env: 'MAILER_CONSOLE_SESSION_HOURS',
    description:
      'How long a console sign-in lasts (its HttpOnly cookie and its row in console_sessions), in hours; then the console asks to sign in again.',
    default: '12',
    parse: int('MAILER_CONSOLE_SESSION_HOURS', 12, 1, 720),
  },
  trackingUrl: {
    env: 'MAILER_TRACKING_URL',
    description:
      "External URL of what mail links to: the open pixel and tracked links (`/t/`) and broadcast mail's one-click unsubscribe URL (`/u/`). Give it a host name of its own, apart from MAILER_PUBLIC_URL's (the console's), so that the redirects any account can have signed by mailing itself never sit on the console's origin; the API then serves `/t/` and `/u/` only to requests for this host, and nothing else to them. Unset (or on the same host name), tracking shares the console's host, which is warned about at start when NODE_ENV is `production`.",
    default: 'MAILER_PUBLIC_URL',
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => {
      const set = optional(raw);
      return set === undefined
        ? (optional(env.MAILER_PUBLIC_URL) ?? defaultPublicUrl(env))
        : httpUrl('MAILER_TRACKING_URL', set);
    },
  },
  trustedProxies: {
    env: 'MAILER_TRUSTED_PROXIES',
    description:
      "Comma-separated addresses or CIDR ranges (`10.0.0.7`, `fd00::/8`) of the reverse proxies in front of the REST port: a request from one of them counts as coming from the client its `X-Forwarded-For` names (for the admin-token throttle and tracking events). Unset, no `X-Forwarded-For` is believed: the client is the TCP peer. REST only: a gRPC client is always its TCP peer (a TCP proxy, as docker-compose.yml's, adds no header, so believing one there would let any client name its own address).",
    default: undefined,
    parse: parseTrustedProxies,
  },
  production: {
    env: 'NODE_ENV',
    description:
      '`production` (the Docker image sets it) marks a production deployment: settings left at a default that only suits development are warned about at start (MAILER_TRACKING_URL).',
    default: undefined,
    parse: (raw: string | undefined) => raw === 'production',
  },
  webhookAllowPrivate: {
    env: 'MAILER_WEBHOOK_ALLOW_PRIVATE',
    description: '`1` lets webhooks target loopback and private addresses.',
    default: '0',
    parse: flag,
  },
  webhookConcurrency: {
    env: 'MAILER_WEBHOOK_CONCURRENCY',
    description:
      'How many first attempts of webhook deliveries a worker makes at once, as soon as the event is recorded; when all are taken by receivers slow to answer, further deliveries wait in Temporal workflows instead.',
    default: '64',
    parse: int('MAILER_WEBHOOK_CONCURRENCY', 64, 1, 10_000),
  },
  webhookDisableAfterDiscards: {
    env: 'MAILER_WEBHOOK_DISABLE_AFTER_DISCARDS',
    description:
      'A webhook is disabled (nothing attempted until an operator enables it) once this many of its deliveries in a row were discarded (every attempt failed) and the first of them at least MAILER_WEBHOOK_DISABLE_AFTER_HOURS ago; a success starts the count again. `0` never disables.',
    default: '10',
    parse: int('MAILER_WEBHOOK_DISABLE_AFTER_DISCARDS', 10, 0, 1_000_000),
  },
  webhookDisableAfterHours: {
    env: 'MAILER_WEBHOOK_DISABLE_AFTER_HOURS',
    description:
      'How long a webhook must have been failing (its first discarded delivery in a row) before it can be disabled; so a short outage during a burst of events does not disable it.',
    default: '24',
    parse: int('MAILER_WEBHOOK_DISABLE_AFTER_HOURS', 24, 0, 8760),
  },
  rateLimit: {
    env: 'MAILER_RATE_LIMIT',
    description: 'Requests per second per API key (bursts up to the same number).',
    default: '100',
    parse: int('MAILER_RATE_LIMIT', 100, 1, 1_000_000),
  },
  bodyMibInFlight: {
    env: 'MAILER_BODY_MIB_IN_FLIGHT',
    description:
      'MiB of request bodies an API process holds at once: REST and gRPC bodies and SMTP submission messages, each counted from its first byte until it is answered. A body that does not fit is answered 429 `too many requests` with `Retry-After` (gRPC `RESOURCE_EXHAUSTED`, SMTP 452 4.3.1), before it is uploaded when its declared length does not fit. Reading and parsing them takes two to four times the bytes counted (docs/operations.md). At least MAILER_BODY_MIB_IN_FLIGHT_PER_KEY.',
    default: '256',
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => {
      const mib = int('MAILER_BODY_MIB_IN_FLIGHT', 256, 1, 1_048_576)(raw);
      const perKey = bodyMibPerKey(env.MAILER_BODY_MIB_IN_FLIGHT_PER_KEY);
      if (mib < perKey)
        throw new Error(
          `MAILER_BODY_MIB_IN_FLIGHT (${mib}) must be at least MAILER_BODY_MIB_IN_FLIGHT_PER_KEY (${perKey})`,
        );
      return mib;
    },
  },
  bodyMibInFlightPerKey: {
    env: 'MAILER_BODY_MIB_IN_FLIGHT_PER_KEY',
    description: `MiB of request bodies one API key may have in flight at once in one process (REST, gRPC and SMTP submission together), within MAILER_BODY_MIB_IN_FLIGHT, a declared length counted whole from the start; beyond it the same 429 (SMTP 452). At least ${BODY_LIMITS.batch / MiB}, the largest body taken (a batch), so that one always fits.`,
    default: String(BODY_LIMITS.batch / MiB),
    parse: (raw: string | undefined) => bodyMibPerKey(raw),
  },
  trackingEventWindowSeconds: {
    env: 'MAILER_TRACKING_EVENT_WINDOW_SECONDS',
    description:
      'Repeated opens of an email, or clicks of one of its links, within this many seconds are counted but make no event (nor webhook).',
    default: '600',
    parse: int('MAILER_TRACKING_EVENT_WINDOW_SECONDS', 600, 1, 2_592_000),
  },
  smtpRetryAttempts: {
    env: 'MAILER_SMTP_RETRY_ATTEMPTS',
    description:
      'Retries of an email after a temporary SMTP failure (4xx, connection, time-out, or a full mailbox even when answered 5xx: docs/delivery.md, Bounce classes) before it bounces as Transient.',
    default: '12',
    parse: int('MAILER_SMTP_RETRY_ATTEMPTS', 12, 0, 100),
  },
  smtpRetryFirstSeconds: {
    env: 'MAILER_SMTP_RETRY_FIRST_SECONDS',
    description:
      'Seconds before the first retry and between it and the second; each later wait doubles, up to an hour.',
    default: '10',
    parse: int('MAILER_SMTP_RETRY_FIRST_SECONDS', 10, 1, 3600),
  },
  delivery: {
    env: 'MAILER_DELIVERY',
    description:
      "How mail leaves: `catcher` (kept locally, shown in the console), `relay` (all mail through SMTP_URL) or `direct` (to each recipient domain's MX hosts on port 25). Every mode signs with DKIM and uses the VERP return path; `direct` sends only from domains whose DKIM record is verified (not the seeded default domain until its records are published).",
    default: '`relay` when SMTP_URL is set, else `catcher`',
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => {
      const mode = optional(raw) ?? (optional(env.SMTP_URL) ? 'relay' : 'catcher');
      if (mode !== 'catcher' && mode !== 'relay' && mode !== 'direct')
        throw new Error(`MAILER_DELIVERY must be catcher, relay or direct, got "${mode}"`);
      if (mode === 'relay' && !optional(env.SMTP_URL))
        throw new Error('MAILER_DELIVERY=relay needs SMTP_URL, the smart host to relay through');
      return mode as DeliveryMode;
    },
  } satisfies Setting<DeliveryMode>,
  hostname: {
    env: 'MAILER_HOSTNAME',
    description:
      'The name the service gives in EHLO and in the Message-IDs it makes; also the MX host of return-path domains and, unless MAILER_SPF_INCLUDE is set, what SPF records authorise (`a:<hostname>`).',
    default: "the machine's host name",
    parse: (raw: string | undefined) => (optional(raw) ?? os.hostname()).toLowerCase(),
  },
  returnPathDomain: {
    env: 'MAILER_RETURN_PATH_DOMAIN',
    description:
      'One domain for every envelope sender (VERP `b-<token>@<domain>`), whose MX points at the inbound listener; unset, each sender domain has its own `rp.<domain>`, published among its DNS records.',
    default: undefined,
    parse: optional,
  },
  spfInclude: {
    env: 'MAILER_SPF_INCLUDE',
    description:
      'A domain whose SPF record lists every address the service sends from; the SPF records to publish then say `include:<it>` instead of `a:<MAILER_HOSTNAME>`.',
    default: undefined,
    parse: optional,
  },
  dnsServers: {
    env: 'MAILER_DNS_SERVERS',
    description: 'Comma-separated `host[:port]` resolvers for MX lookups and domain verification.',
    default: 'the system resolver',
    parse: (raw: string | undefined) =>
      (optional(raw) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
  },
  fblSources: {
    env: 'MAILER_FBL_SOURCES',
    description:
      "Comma-separated feedback loops whose complaint reports count against an account's health: addresses or networks they connect from (`203.0.113.7`, `2001:db8::/32`) and domains that DKIM-sign their reports (`feedback.example`, subdomains included). A complaint from any other source is recorded as an event of the copy it came back for (and suppresses that recipient) but moves no account to review or paused.",
    default: 'none: no complaint moves health',
    parse: (raw: string | undefined) =>
      (optional(raw) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
  },
  dnsRecheckMinutes: {
    env: 'MAILER_DNS_RECHECK_MINUTES',
    description:
      "A verified domain's DNS records are looked up again when their last check is older than this (a Temporal schedule runs the re-check); one whose ownership, SPF or DKIM record stopped checking out is flagged (`dns_failing_since`, a warning in the log) and keeps sending.",
    default: '60',
    parse: int('MAILER_DNS_RECHECK_MINUTES', 60, 1, 10_080),
  },
  statsFoldSeconds: {
    env: 'MAILER_STATS_FOLD_SECONDS',
    description:
      'How often the worker folds new events into the stats rollup (docs/api.md, Stats). GET /stats adds the events not folded yet to the rollup at every request, so under heavy sending a shorter interval keeps those requests cheap; folding costs PostgreSQL about 25 to 50 µs per event on a 2-core machine, whatever the interval.',
    default: '5',
    parse: int('MAILER_STATS_FOLD_SECONDS', 5, 1, 3_600),
  },
  retentionContentDays: {
    env: 'MAILER_RETENTION_CONTENT_DAYS',
    description:
      "Days an email's content (html, text, headers, attachments; the draft of a sent or cancelled scheduled email) is kept; after that `GET /emails/{id}` answers it with `html` and `text` empty, `headers` `{}` and no attachments, everything else as before. An email still being delivered keeps its content. `0` keeps it forever.",
    default: '30',
    parse: int('MAILER_RETENTION_CONTENT_DAYS', 30, 0, 36_500),
  },
  retentionEventsDays: {
    env: 'MAILER_RETENTION_EVENTS_DAYS',
    description:
      "Days events (the events feed, timelines, stats), webhook deliveries with their attempts, and mail caught by the built-in catcher are kept; an event whose webhook delivery is still pending is kept until it ends. The management API's per-day stats (`GET /accounts/:id/stats`) count events, so a shorter setting shortens them; `GET /stats` keeps its counts in a rollup. `0` keeps them forever.",
    default: '90',
    parse: int('MAILER_RETENTION_EVENTS_DAYS', 90, 0, 36_500),
  },
  mxPort: {
    env: 'MAILER_MX_PORT',
    description: 'The port direct delivery connects to on MX hosts (tests only).',
    default: '25',
    parse: int('MAILER_MX_PORT', 25, 1),
  },
  mxAllowPrivate: {
    env: 'MAILER_MX_ALLOW_PRIVATE',
    description:
      '`1` lets direct delivery connect to MX hosts at loopback and private addresses (tests, private networks); refused by default, so a recipient domain cannot point the service at internal hosts.',
    default: '0',
    parse: flag,
  },
  egressRules: {
    env: 'MAILER_EGRESS_RULES',
    description:
      "Direct delivery's shaping rules file (TOML; docs/deliverability.md): per destination site the connection limit, messages per connection and rate, the automation rules that react to SMTP replies, and source-address pools with warm-up plans. Re-read when it changes, without a restart; a file that does not parse leaves the rules in force and is reported on GET /admin/egress. Unset: the built-in defaults (config/egress-rules.toml).",
    default: 'config/egress-rules.toml (built in)',
    parse: (raw: string | undefined) => optional(raw),
  },
  egressPools: {
    env: 'MAILER_EGRESS_POOLS',
    description:
      'Source-address pools for direct delivery, beside those of the rules file: `name=address[/ehlo],address[/ehlo];name=...`. A pool named after a stream (`transactional`, `broadcast`) sends that stream; each connection binds to one of its addresses and says its EHLO name (MAILER_HOSTNAME when none is given). Empty: connections leave from the default address.',
    default: '(none)',
    parse: (raw: string | undefined) => optional(raw),
  },
  mtaSts: {
    env: 'MAILER_MTA_STS',
    description:
      "`1` makes direct delivery apply recipient domains' MTA-STS policies (RFC 8461): in `enforce` mode mail goes only to the policy's MX hosts over TLS with a verified certificate, else it is deferred. `0` ignores them.",
    default: '1',
    parse: (raw: string | undefined) => optional(raw) !== '0',
  },
  mtaStsPort: {
    env: 'MAILER_MTA_STS_PORT',
    description:
      'The HTTPS port MTA-STS policies are fetched from (`https://mta-sts.<domain>/.well-known/mta-sts.txt`). 443 in the world; tests serve policies on another.',
    default: '443',
    parse: int('MAILER_MTA_STS_PORT', 443, 1, 65535),
  },
  encryptionKey: {
    env: 'MAILER_ENCRYPTION_KEY',
    description:
      'Key (32 bytes as 64 hex digits or base64) that seals the secrets stored in the database (DKIM private keys, webhook secrets, the tracking key); every process of one installation needs the same: the database records its fingerprint, and a process with another key refuses to start. Unset, one is generated into MAILER_DATA_DIR/encryption-key on first start.',
    default: undefined,
    parse: (raw: string | undefined) => {
      const key = optional(raw);
      // Malformed, the service refuses to start rather than make keys it could not open later.
      if (key !== undefined) parseEncryptionKey(key, 'MAILER_ENCRYPTION_KEY');
      return key;
    },
  },
  catcherPort: {
    env: 'MAILER_CATCHER_PORT',
    description:
      'Port of the built-in mail catcher (MAILER_DELIVERY=catcher, the default without SMTP_URL; 0 picks a free port).',
    default: '2525',
    parse: int('MAILER_CATCHER_PORT', 2525),
  },
  inboundPort: {
    env: 'MAILER_INBOUND_PORT',
    description:
      "Port of the inbound SMTP listener (the MX of inbound routes' domains, and of return-path domains for complaint (ARF) and bounce (DSN) reports), on HOST (API role; 0 picks a free port).",
    default: '2526',
    parse: int('MAILER_INBOUND_PORT', 2526),
  },
  inboundMaxBytes: {
    env: 'MAILER_INBOUND_MAX_BYTES',
    description:
      'Largest message the inbound listener takes for an inbound route, in bytes, announced in its EHLO `SIZE`; a larger one is answered `552` (at `MAIL FROM` when its `SIZE=` says so). Mail only for report addresses keeps its 1 MiB cap. The bytes stream into the database as they arrive.',
    default: '26214400',
    parse: int('MAILER_INBOUND_MAX_BYTES', 26_214_400, 1_048_576, 1_073_741_824),
  },
  submissionPort: {
    env: 'MAILER_SUBMISSION_PORT',
    description:
      'Port of the SMTP submission listener on HOST (API role): STARTTLS, then `AUTH PLAIN` or `LOGIN` with any user name and an API key as the password; each message becomes an email as `POST /emails` makes it. `0` turns it off.',
    default: '2587',
    parse: int('MAILER_SUBMISSION_PORT', 2587),
  },
  smtpConnectionsPerAddress: {
    env: 'MAILER_SMTP_CONNECTIONS_PER_ADDRESS',
    description:
      'Connections one client address (an IPv6 /64) may hold at once on each SMTP listener: on submission those not yet authenticated, on the inbound report listener all of them; one more is answered `421` and closed. Raise it when many clients reach the service from one address (behind NAT, or one host opening many connections at once).',
    default: '10',
    parse: int('MAILER_SMTP_CONNECTIONS_PER_ADDRESS', 10, 1, 10_000),
  },
  smtpSetupSeconds: {
    env: 'MAILER_SMTP_SETUP_SECONDS',
    description:
      'Seconds a connection to an SMTP listener has to get going: on submission to finish STARTTLS and AUTH, on the inbound report listener to start DATA (from the greeting, and again after each message). A connection that has not is answered `421` and closed, so strangers cannot hold its slots.',
    default: '30',
    parse: int('MAILER_SMTP_SETUP_SECONDS', 30, 1, 600),
  },
  smtpProxyProtocolFrom: {
    env: 'MAILER_SMTP_PROXY_PROTOCOL_FROM',
    description:
      "Comma-separated IP addresses of TCP proxies in front of both SMTP listeners that begin each connection with a PROXY protocol header (nginx `proxy_protocol on;`, HAProxy `send-proxy`): a connection from one of them is counted as the client its header names (MAILER_SMTP_CONNECTIONS_PER_ADDRESS), and one without the header is closed. Unset, each client is its TCP peer, so behind a proxy that sends no header all clients share the proxy's address and its cap. docker-compose.yml sets it to its nginx's address.",
    default: undefined,
    parse: (raw: string | undefined) => {
      const entries = (optional(raw) ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      // smtp-server compares the peer with each entry as it is: a range would never match, and trust no one.
      const bad = entries.find((e) => net.isIP(e) === 0);
      if (bad !== undefined)
        throw new Error(
          `MAILER_SMTP_PROXY_PROTOCOL_FROM must list IP addresses (not ranges) separated by commas; "${bad}" is not one`,
        );
      return entries;
    },
  },
  tlsCert: {
    env: 'MAILER_TLS_CERT',
    description:
      'PEM certificate file (with its chain) for STARTTLS on the SMTP submission listener; set together with MAILER_TLS_KEY. Unset, a self-signed certificate for MAILER_HOSTNAME is made once into MAILER_DATA_DIR/tls-cert.pem.',
    default: undefined,
    parse: optional,
  },
  tlsKey: {
    env: 'MAILER_TLS_KEY',
    description:
      "PEM private key file of MAILER_TLS_CERT. Unset, the self-signed certificate's key is kept in MAILER_DATA_DIR/tls-key.pem.",
    default: undefined,
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => {
      const key = optional(raw);
      // One without the other would silently fall back to the self-signed certificate.
      if ((key === undefined) !== (optional(env.MAILER_TLS_CERT) === undefined))
        throw new Error('MAILER_TLS_CERT and MAILER_TLS_KEY must be set together');
      return key;
    },
  },
  embeddedPostgresPort: {
    env: 'MAILER_EMBEDDED_PG_PORT',
    description: 'Port of the embedded PostgreSQL (when DATABASE_URL is unset).',
    default: '54329',
    parse: int('MAILER_EMBEDDED_PG_PORT', 54329, 1),
  },
  embeddedTemporalPort: {
    env: 'MAILER_EMBEDDED_TEMPORAL_PORT',
    description: 'Frontend port of the embedded Temporal dev server; its UI listens one port above.',
    default: '7233',
    parse: int('MAILER_EMBEDDED_TEMPORAL_PORT', 7233, 1, 65534),
  },
  defaultDomain: {
    env: 'MAILER_DEFAULT_DOMAIN',
    description: 'Sender domain of the default account created on first start (verified at once).',
    default: 'example.com',
    parse: str('example.com'),
  },
  cacheDir: {
    env: 'XDG_CACHE_HOME',
    description:
      'Per-user cache; the Temporal CLI is built once into `$XDG_CACHE_HOME/mailer` (else `~/.cache/mailer`), shared by every clone.',
    default: '~/.cache',
    parse: (raw: string | undefined, env: NodeJS.ProcessEnv) =>
      path.join(optional(raw) ?? path.join(env.HOME ?? os.homedir(), '.cache'), 'mailer'),
  },
  workflowBundle: {
    env: 'MAILER_WORKFLOW_BUNDLE',
    description: 'Prebuilt workflow bundle (`npm run build`); unset, the worker bundles workflows/ at start.',
    default: undefined,
    parse: optional,
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description:
      'OpenTelemetry: base URL of an OTLP/HTTP receiver (a collector, Jaeger, Tempo...); traces are sent as protobuf to `<it>/v1/traces`. Unset (and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT unset), nothing is traced and tracing costs nothing. The exporter also reads the standard OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION (and their _TRACES_ forms) itself.',
    default: undefined,
    parse: optional,
  },
  otlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    description:
      'OpenTelemetry: the full URL traces are POSTed to (used as it is, no `/v1/traces` added); wins over OTEL_EXPORTER_OTLP_ENDPOINT.',
    default: undefined,
    parse: optional,
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    description:
      'OpenTelemetry: `service.name` of the spans; wins over a `service.name` in OTEL_RESOURCE_ATTRIBUTES (`mailer` when neither says).',
    default: 'mailer',
    parse: optional,
  },
  otelResourceAttributes: {
    env: 'OTEL_RESOURCE_ATTRIBUTES',
    description:
      'OpenTelemetry: more resource attributes of the spans, as `key=value,key=value` (values percent-encoded), e.g. `deployment.environment.name=prod,service.instance.id=api-1`.',
    default: undefined,
    parse: (raw: string | undefined) => parseResourceAttributes(raw ?? ''),
  },
  otelExportDelayMs: {
    env: 'OTEL_BSP_SCHEDULE_DELAY',
    description:
      "OpenTelemetry: milliseconds between two exports of the spans gathered (the batch span processor's delay); spans left are sent at stop.",
    default: '5000',
    parse: int('OTEL_BSP_SCHEDULE_DELAY', 5000, 1, 600_000),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    description: 'fatal, error, warn, info, debug or trace.',
    default: 'info',
    parse: str('info'),
  },
  logFormat: {
    env: 'MAILER_LOG_FORMAT',
    description:
      'How log lines are written on stdout: `json` (one JSON object a line, to parse and ship), `pretty` (human-readable, coloured in a terminal) or `auto`: pretty when stdout is a terminal, else JSON (CI, docker, systemd, a pipe). The worker child process (MAILER_WORKER_PROCESS) writes as its parent decided.',
    default: 'auto',
    parse: (raw: string | undefined) => {
      const format = raw === undefined || raw === '' ? 'auto' : raw;
      if (format !== 'auto' && format !== 'json' && format !== 'pretty')
        throw new Error(`MAILER_LOG_FORMAT must be auto, json or pretty, got "${format}"`);
      return format as LogFormatSetting;
    },
  } satisfies Setting<LogFormatSetting>,
} as const;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['parse']> };

/** Reads the configuration from an environment (the process's by default); throws on a malformed value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const config = {} as Record<string, unknown>;
  for (const [key, setting] of Object.entries(settings) as [keyof Settings, Setting<unknown>][]) {
    config[key] = setting.parse(env[setting.env], env);
  }
  return { ...(config as Config), ...overrides };
}

/** Every setting with its variable, default and meaning, for docs and `--help`. */
export function describeConfig(): { env: string; default: string | undefined; description: string }[] {
  return Object.values(settings).map(({ env, default: d, description }) => ({ env, default: d, description }));
}

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry specification writes it: `key=value` pairs separated by
 * commas, values percent-encoded. A malformed pair refuses the start rather than lose attributes silently.
 */
export function parseResourceAttributes(raw: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || key === '')
      throw new Error(`OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, got "${pair}"`);
    try {
      attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`OTEL_RESOURCE_ATTRIBUTES: the value of ${key} is not valid percent-encoding`);
    }
  }
  return attributes;
}
