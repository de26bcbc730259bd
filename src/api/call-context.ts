import type { Principal } from '../services/auth-service.js';

/**
 * What a handler needs of its call, whichever adapter carried it. Connect's HandlerContext has this shape;
 * the REST gateway builds one from the Fastify request.
 */
export interface CallContext {
  requestHeader: Headers;
  responseHeader: Headers;
  /** Set once the call is admitted (key checked, rate limit taken), so it is done once per call. */
  principal?: Principal;
}
