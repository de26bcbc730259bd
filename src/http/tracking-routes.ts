import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { TrackingClient, TrackingService } from '../services/tracking-service.js';

/** A transparent 1x1 GIF (43 bytes). */
const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/**
 * The tracking pixel and tracked links (the paths src/delivery/message/tracking.ts builds), without Authorization: mail
 * clients fetch them. Wildcard routes, not `:token`: a click token carries its link and is longer than
 * Fastify's 100-character parameter limit.
 *
 * The client's address is `request.ip`: the peer of the TCP connection, or, when that peer is a proxy listed
 * in MAILER_TRUSTED_PROXIES, the client its X-Forwarded-For names (trusting the header from anyone would let
 * clients write any address into events).
 *
 * These are served on MAILER_TRACKING_URL's host only when it is not the console's (tracking-host.ts), and
 * set no cookie: nothing here reads one, and a tracking host must share none with the console.
 *
 * Fastify answers HEAD on these GET routes with the same handlers; a HEAD is answered alike but counted as
 * nothing: no mail client reads an image or follows a link with HEAD, link checkers and scanners do.
 */
export function trackingRoutes(tracking: TrackingService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/t/o/*', async (request, reply) => {
      // The image never depends on the token (a bad one gets the same GIF); the service bounds the wait.
      if (request.method !== 'HEAD') await tracking.open(tokenOf(request), clientOf(request));
      return reply
        .code(200)
        .header('content-type', 'image/gif')
        .header('cache-control', 'no-store, private')
        .send(PIXEL_GIF);
    });

    app.get('/t/c/*', async (request, reply) => {
      const location =
        request.method === 'HEAD'
          ? tracking.clickTarget(tokenOf(request))
          : await tracking.click(tokenOf(request), clientOf(request));
      if (location === undefined) {
        throw new AppError('not_found', 'This link is not valid: it was not issued by this server or was altered.');
      }
      // no-store: every click reaches the server; no-referrer: the target learns nothing of the tracking URL.
      return reply
        .header('cache-control', 'no-store, private')
        .header('referrer-policy', 'no-referrer')
        .redirect(location, 302);
    });
  };
}

const tokenOf = (request: FastifyRequest) => (request.params as { '*': string })['*'];
const clientOf = (request: FastifyRequest): TrackingClient => ({
  ip: request.ip,
  userAgent: request.headers['user-agent'] ?? '',
});
