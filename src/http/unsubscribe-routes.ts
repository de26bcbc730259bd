import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { UnsubscribeService } from '../services/unsubscribe-service.js';
import { invalidLinkPage, UNSUBSCRIBE_PAGE_CSP, unsubscribedPage, unsubscribePage } from './unsubscribe-page.js';

/**
 * A POST body is read up to this many bytes: RFC 8058's is `List-Unsubscribe=One-Click` (26 bytes), as a form
 * or multipart/form-data (a boundary and a part header more). Its content is not needed (the token in the
 * path is the whole request), so a bigger body is refused (413) before anything else is done.
 */
export const UNSUBSCRIBE_BODY_LIMIT = 4096;

/** Where delivery/message/unsubscribe-token.ts puts the token under the tracking URL (UNSUBSCRIBE_PATH there). */
const UNSUBSCRIBE_PATH = '/u/';

/**
 * The one-click unsubscribe URL of broadcast mail, `{tracking URL}/u/<token>`, without Authorization: a mail
 * client (RFC 8058) or the recipient's browser calls it. Served where the tracking links are
 * (tracking-host.ts).
 *
 * - `POST` unsubscribes (idempotently) and answers 200 with the confirmation page, whatever the body's type
 *   (the form, multipart/form-data, or none); a token this server did not sign is 404 and unsubscribes nobody.
 * - `GET` (and HEAD) answers the page with the button that posts, and never changes anything: link
 *   scanners and previews fetch every URL of a message.
 */
export function unsubscribeRoutes(unsubscribe: UnsubscribeService) {
  return async (app: FastifyInstance): Promise<void> => {
    // Its own context: the rest of the REST port reads every body as JSON (rest-app.ts); these read any as bytes.
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: UNSUBSCRIBE_BODY_LIMIT }, (_req, _body, done) =>
        done(null, undefined),
      );

      scope.get(`${UNSUBSCRIBE_PATH}*`, async (request, reply) => {
        const token = tokenOf(request);
        try {
          const target = await unsubscribe.page(token);
          return html(reply, 200, unsubscribePage(target, `${UNSUBSCRIBE_PATH}${encodeURIComponent(token)}`));
        } catch (err) {
          // A person following a link gets a page; anything else (a scanner, a script) the usual JSON error.
          if (err instanceof AppError && err.kind === 'not_found' && wantsHtml(request))
            return html(reply, 404, invalidLinkPage(err.message));
          throw err;
        }
      });

      scope.post(`${UNSUBSCRIBE_PATH}*`, { bodyLimit: UNSUBSCRIBE_BODY_LIMIT }, async (request, reply) => {
        const { target } = await unsubscribe.unsubscribe(tokenOf(request));
        return html(reply, 200, unsubscribedPage(target));
      });
    });
  };
}

const tokenOf = (request: FastifyRequest) => (request.params as { '*': string })['*'];
const wantsHtml = (request: FastifyRequest) => /\btext\/html\b/i.test(request.headers.accept ?? '');

function html(reply: FastifyReply, status: number, body: string) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', UNSUBSCRIBE_PAGE_CSP)
    .header('cache-control', 'no-store, private')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .send(body);
}
