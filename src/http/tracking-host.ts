import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * Tracking apart from the console. Any account can have this service sign a redirect to any link, by
 * mailing itself an HTML message with click tracking on: served on the console's host, such a link would
 * be a redirect anyone can mint on the operator's own origin (phishing that looks like the console), on
 * the host whose cookies and storage the console's are. So when MAILER_TRACKING_URL names another host
 * than MAILER_PUBLIC_URL, the REST port splits by the request's Host: the tracking host is served the
 * tracking paths (and the probes, for a load balancer checking through it) and nothing else, and any
 * other host is served everything but the tracking paths. Mail sent before the split keeps links on the
 * public URL: they answer 404 from then on, the price of taking the redirects off the console's origin.
 *
 * The host compared is the name alone, without the port: two ports of one host name share its cookies,
 * so they are no separation (and a proxy such as nginx's `$host` passes the name without the port).
 * The Host header is what the browser asked for; X-Forwarded-Host is ignored, since a client can send one.
 */

/**
 * The paths a mail client fetches (tracking-routes.ts): everything mail links to lives under them, the
 * pixel and tracked links under `/t/`, the one-click unsubscribe URL and its page under `/u/`.
 */
export const TRACKING_PATH_PREFIXES: readonly string[] = ['/t/', '/u/'];
const isTrackingRoute = (route: string) => TRACKING_PATH_PREFIXES.some((prefix) => route.startsWith(prefix));
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/** A URL's host name as compared: lower-case, an IDN in its ASCII form, no trailing dot. */
const hostNameOfUrl = (url: string): string => new URL(url).hostname.replace(/\.$/, '');

/** A Host header's host name, compared as hostNameOfUrl's; undefined when there is none or it is no host. */
export function hostNameOfHeader(host: string | undefined): string | undefined {
  if (host === undefined || host === '' || /[/?#@\s]/.test(host)) return undefined;
  return URL.canParse(`http://${host}`) ? hostNameOfUrl(`http://${host}`) : undefined;
}

/** The tracking host's name when it is not the console's, else undefined (tracking shares the console's host). */
export function separateTrackingHost(publicUrl: string, trackingUrl: string): string | undefined {
  const tracking = hostNameOfUrl(trackingUrl);
  return tracking !== hostNameOfUrl(publicUrl) ? tracking : undefined;
}

/** The Fastify plugin that splits the REST port by Host (pass it first in `buildRestApp`'s `plugins`). */
export function trackingHostPlugin(options: {
  publicUrl: string;
  trackingUrl: string;
}): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    const trackingHost = separateTrackingHost(options.publicUrl, options.trackingUrl);
    if (trackingHost === undefined) return;
    const trackingOrigin = new URL(options.trackingUrl).origin;
    app.addHook('onRequest', async (request) => {
      // Unrouted requests were answered 404 before this hook.
      const route = request.routeOptions.url ?? '';
      const tracking = isTrackingRoute(route);
      const onTrackingHost = hostNameOfHeader(request.headers.host) === trackingHost;
      if (tracking && !onTrackingHost) {
        throw new AppError('not_found', `Tracking links are not served on this host: they are on ${trackingOrigin}`);
      }
      if (!tracking && onTrackingHost && !PROBES.has(route)) {
        throw new AppError(
          'not_found',
          `route ${request.method} ${request.url.split('?')[0] ?? ''} not found: this host serves tracking links only`,
        );
      }
    });
  };
}

/**
 * Warns (once, at start) when a production deployment (NODE_ENV=production) serves tracking on the console's
 * host: the default, MAILER_TRACKING_URL unset, or set on MAILER_PUBLIC_URL's host name. Development keeps
 * the default quietly: one address serves everything on a laptop.
 */
export function warnOfSharedTrackingHost(
  config: { production: boolean; publicUrl: string; trackingUrl: string },
  logger: Pick<Logger, 'warn'>,
): void {
  if (!config.production || separateTrackingHost(config.publicUrl, config.trackingUrl) !== undefined) return;
  logger.warn(
    { publicUrl: config.publicUrl, trackingUrl: config.trackingUrl },
    "tracked links and pixels are served on the console's host: any account can make signed redirects on it by mailing itself. " +
      'Set MAILER_TRACKING_URL to a URL on a host name of its own (e.g. https://track.example.net)',
  );
}
