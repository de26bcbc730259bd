import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { CallContext } from '../api/call-context.js';
import { rateMetadata } from '../api/error-metadata.js';
import type { Logger } from '../logger.js';
import type { Principal } from '../services/auth-service.js';
import { toConnectError } from './error-interceptor.js';
import { inCallLogContext } from './request-context.js';

/** Judges a call's credentials from its headers alone; answers the admitted key's principal, if any. */
export type Admit = (ctx: CallContext) => Promise<Principal | void>;

const ADMITTED = createContextKey<Principal | undefined>(undefined, { description: 'the principal the gate admitted' });

/**
 * connect-es runs a request gate once the headers are in and before any byte of the message is read,
 * decompressed or parsed (interceptors run only after), so a call without valid credentials costs no
 * more than its headers, however large the body it announces. A refusal is answered in the caller's
 * protocol with the same code, message and `mail-error` as any other error. The key's rate goes out in the
 * response metadata of every answer to an admitted call; a refusal carries its own in its trailers.
 */
export function createAdmissionGate(admit: Admit, logger: Logger): (ctx: HandlerContext) => Promise<void> {
  return async (ctx) => {
    const call: CallContext = { requestHeader: ctx.requestHeader, values: ctx.values, rpc: ctx.method.localName };
    let principal: Principal | void;
    try {
      principal = await inCallLogContext(ctx.values, () => admit(call));
    } catch (err) {
      throw inCallLogContext(ctx.values, () => toConnectError(err, logger, ctx.url));
    }
    if (call.rate)
      for (const [name, value] of Object.entries(rateMetadata(call.rate))) ctx.responseHeader.set(name, value);
    if (principal) ctx.values.set(ADMITTED, principal);
  };
}

/**
 * The handler's call context with the principal the gate admitted, so that the handler's own guard does
 * not authenticate again nor take a second request from the rate limit.
 */
export function admittedCall(ctx: HandlerContext): HandlerContext & CallContext {
  const principal = ctx.values.get(ADMITTED);
  return principal ? { ...ctx, principal } : ctx;
}
