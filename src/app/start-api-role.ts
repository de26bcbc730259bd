import { admitAdmin } from '../api/admin-api.js';
import { createConsoleSessionAdmission } from '../api/console-session-admission.js';
import type { CallContext } from '../api/call-context.js';
import { BytesInFlight } from '../bytes-in-flight.js';
import { consolePlugin } from '../console/console-plugin.js';
import { consoleSessionRoutes } from '../console/console-session-routes.js';
import { buildRestApp } from '../http/rest-app.js';
import { trackingHostPlugin } from '../http/tracking-host.js';
import { trackingRoutes } from '../http/tracking-routes.js';
import { unsubscribeRoutes } from '../http/unsubscribe-routes.js';
import { authenticateInbound, mailauthResolver } from '../inbound/inbound-auth.js';
import { createCachingResolver } from '../net/caching-resolver.js';
import { parseInbound } from '../inbound/inbound-parse.js';
import { startInboundServer } from '../inbound/report-listener.js';
import { startSubmissionServer } from '../inbound/submission-server.js';
import { loadTlsCertificate, type TlsCertificate } from '../inbound/tls-certificate.js';
import { buildGrpcApp } from '../rpc/grpc-app.js';
import { groupedPrincipalLookup } from '../services/principal-lookup.js';
import { createAuthService } from '../services/auth-service.js';
import { createAuthThrottle } from '../services/auth-throttle.js';
import { createPrincipalCache } from '../services/principal-cache.js';
import { createConsoleSessionsService } from '../services/console-sessions-service.js';
import { createReadiness } from '../services/readiness-service.js';
import type { SubmissionService } from '../services/submission-service.js';
import { createTrackingService } from '../services/tracking-service.js';
import { createInboundMailService } from '../services/inbound-mail-service.js';
import { createInboundRoutesService } from '../services/inbound-routes-service.js';
import { withUnsubscribeAddresses } from '../services/inbound-unsubscribe.js';
import { createUnsubscribeService } from '../services/unsubscribe-service.js';
import { createUsageRecorder } from '../services/usage-recorder.js';
import type { PinnedVersions } from '../services/pinned-versions.js';
import { TEMPLATES_CHANNEL } from '../db/index.js';
import { createHandlers } from './create-handlers.js';
import { listen } from './listen.js';
import type { Core } from './start-core.js';
import type { StopList } from './stop-list.js';

export interface ApiRole {
  restUrl: string;
  grpcAddress: string;
  /** The inbound SMTP listener: the MX of inbound routes' domains, and of return paths for complaint and bounce reports. */
  inboundUrl: string;
  /** The SMTP submission listener; undefined when MAILER_SUBMISSION_PORT is 0. */
  submissionUrl: string | undefined;
}

/** The API role: the REST gateway (with the console and tracking links), the gRPC server, and the inbound listener. */
export async function startApiRole(core: Core, notifyQueued: () => void, stops: StopList): Promise<ApiRole> {
  const { config, repos, logger } = core;
  const tls = await loadTlsCertificate({
    certFile: config.tlsCert,
    keyFile: config.tlsKey,
    dataDir: config.dataDir,
    hostname: config.hostname,
  });
  if (tls.created)
    logger.info(
      { dataDir: config.dataDir },
      'made a self-signed STARTTLS certificate into the data dir (set MAILER_TLS_CERT and MAILER_TLS_KEY for a real one)',
    );
  // One-click unsubscribe, by its URL (REST port, below) and its mailto address (the inbound listener).
  const unsubscribe = createUnsubscribeService({
    unsubscribes: repos.unsubscribes,
    tokens: core.unsubscribeTokens,
    now: core.now,
  });
  const inboundMail = withUnsubscribeAddresses(core.inboundFeedback, {
    tokens: core.unsubscribeTokens,
    unsubscribe,
    logger,
  });
  // Inbound mail's SPF, DKIM and DMARC lookups are kept for their TTLs (net/caching-resolver.ts), as a receiving
  // MTA's resolver keeps them: a sender's messages ask the same four or so names each, and asking them anew cost
  // a round trip and a parse per name per message (docs/benchmark.md, "Session 21").
  const dnsForMailauth = mailauthResolver(createCachingResolver(config.dnsServers));
  const inbound = await startInboundServer({
    host: config.host,
    port: config.inboundPort,
    logger,
    tls,
    ...smtpClients(config),
    acceptsRecipient: inboundMail.acceptsRecipient,
    onMessage: (raw, envelope) => inboundMail.receive(raw, envelope),
    // Mail for inbound routes (docs/inbound.md): streamed into the blob store, parsed, authenticated, recorded.
    routes: createInboundMailService({
      blobs: repos.inboundBlobs,
      receipts: repos.inboundReceive,
      routes: createInboundRoutesService({
        routes: repos.inboundRoutes,
        domains: repos.domains,
        accounts: repos.accounts,
      }),
      reports: inboundMail,
      parse: parseInbound,
      authenticate: (source, envelope) => authenticateInbound(source, envelope, dnsForMailauth),
      maxBytes: config.inboundMaxBytes,
      logger,
      now: core.now,
    }),
  });
  stops.onStop(inbound.close);
  const usage = createUsageRecorder(
    (d) => repos.apiKeys.addUsage(d),
    (err) => logger.warn({ err }, 'usage statistics not saved'),
  );
  stops.onStop(usage.close);
  const adminThrottle = createAuthThrottle();
  const auth = createAuthService({
    findPrincipal: groupedPrincipalLookup(repos.apiKeys.findPrincipals),
    adminToken: core.admin.token,
    adminThrottle,
    metricsToken: config.metricsToken,
    cache: createPrincipalCache(),
  });
  const { emailApi, adminApi, guard, submission, templatePins } = createHandlers(core, { auth, usage, notifyQueued });
  await listenForTemplateChanges(core, templatePins, stops);
  // One count of request bytes held for REST, gRPC and SMTP submission together, per process and per key.
  const MiB = 1024 * 1024;
  const bytesInFlight = new BytesInFlight({
    process: config.bodyMibInFlight * MiB,
    perKey: config.bodyMibInFlightPerKey * MiB,
  });
  const submissionUrl = await startSubmission(core, submission, tls, stops, bytesInFlight);

  // One admin admission (token, throttle by client address) for REST and gRPC.
  const adminCall = async (ctx: CallContext) => admitAdmin(auth, ctx);
  // The console's sign-in: its session cookie is a credential of REST alone (gRPC callers send a key).
  const consoleSessions = createConsoleSessionsService({
    sessions: repos.consoleSessions,
    accounts: repos.accounts,
    auth,
    throttle: adminThrottle,
    lifetimeMs: config.consoleSessionHours * 3_600_000,
    adminToken: core.admin.token,
  });
  const sessionAdmission = createConsoleSessionAdmission({ sessions: consoleSessions, guard });
  const rest = await buildRestApp({
    emailApi,
    adminApi,
    logger,
    metrics: core.metrics,
    bytesInFlight,
    publicUrl: config.publicUrl,
    trustedProxies: config.trustedProxies,
    // The split by Host first, before the routes it splits.
    plugins: [
      trackingHostPlugin({ publicUrl: config.publicUrl, trackingUrl: config.trackingUrl }),
      trackingRoutes(
        createTrackingService({
          hits: repos.tracking,
          tokens: core.linkTracker,
          now: core.now,
          windowSeconds: config.trackingEventWindowSeconds,
          onError: (err) => logger.warn({ err }, 'tracking hit not recorded'),
        }),
      ),
      unsubscribeRoutes(unsubscribe),
      consoleSessionRoutes({ sessions: consoleSessions, publicUrl: config.publicUrl }),
      consolePlugin({ publicUrl: config.publicUrl }),
    ],
    admitApi: sessionAdmission.api(guard.admit),
    admitAdmin: sessionAdmission.admin(adminCall),
    admitMetrics: (authorization) => auth.authenticateMetrics(authorization),
    checkReady: createReadiness({ database: () => repos.ping(), temporal: () => core.temporal.ping() }, logger).down,
  });
  const grpc = await buildGrpcApp({
    emailApi,
    adminApi,
    admitApi: guard.admit,
    admitAdmin: adminCall,
    logger,
    metrics: core.metrics,
    bytesInFlight,
  });
  const restUrl = await listen(rest, config.host, config.port);
  stops.onStop(() => rest.close());
  const grpcUrl = await listen(grpc, config.host, config.grpcPort);
  stops.onStop(() => grpc.close());
  return { restUrl, grpcAddress: grpcUrl.replace(/^https?:\/\//, ''), inboundUrl: inbound.url, submissionUrl };
}

/**
 * Template changes made through any process reach this one's memory of published versions (migration 24's NOTIFY).
 * postgres.js LISTENs again on each reconnection and calls `onlisten` each time: notifications sent meanwhile are
 * lost, so each (re)connection starts from nothing. Without a LISTEN, nothing is kept and every send asks.
 */
async function listenForTemplateChanges(core: Core, pins: PinnedVersions, stops: StopList): Promise<void> {
  try {
    const listener = await core.sql.listen(
      TEMPLATES_CHANNEL,
      (accountId) => pins.forgetAccount(accountId),
      () => pins.listenStarted(),
    );
    stops.onStop(async () => {
      pins.listenStopped();
      await listener.unlisten().catch((err: unknown) => core.logger.warn({ err }, 'UNLISTEN at stop failed'));
    });
  } catch (err) {
    core.logger.warn({ err }, 'LISTEN for template changes failed: each templated send reads its version');
  }
}

/** The SMTP submission listener, with the STARTTLS certificate both listeners use (configured, or self-signed once into the data dir). */
async function startSubmission(
  core: Core,
  handler: SubmissionService,
  tls: TlsCertificate,
  stops: StopList,
  bytesInFlight: BytesInFlight,
): Promise<string | undefined> {
  const { config, logger } = core;
  if (config.submissionPort === 0) return undefined;
  const server = await startSubmissionServer({
    host: config.host,
    port: config.submissionPort,
    hostname: config.hostname,
    tls,
    logger,
    handler,
    ...smtpClients(config),
    bytesInFlight,
  });
  stops.onStop(server.close);
  return server.url;
}

/** Both SMTP listeners' per-address cap and setup deadline, and the proxies that name each client's address. */
const smtpClients = (config: Core['config']) => ({
  limits: { perAddress: config.smtpConnectionsPerAddress, setupMs: config.smtpSetupSeconds * 1000 },
  proxyProtocolFrom: config.smtpProxyProtocolFrom,
});
