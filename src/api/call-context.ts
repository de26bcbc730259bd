import type { DescService } from '@bufbuild/protobuf';
import { createContextKey, type ContextValues, type ServiceImpl } from '@connectrpc/connect';
import type { RateDecision } from '../domain/rate-decision.js';
import type { Principal } from '../services/auth-service.js';

/** The caller's network address (the socket's peer), set by each adapter from its connection. */
export const CLIENT_ADDRESS = createContextKey<string>('unknown', { description: 'client address' });

/**
 * What a handler needs of its call, whichever adapter carried it. Connect's HandlerContext has this shape;
 * the REST gateway builds one from the Fastify request. Handlers only read it, and record what the
 * adapter is to tell the caller (`rate`); each adapter writes that in its own terms.
 */
export interface CallContext {
  requestHeader: Headers;
  /** Per-call values; CLIENT_ADDRESS holds who is calling. */
  values: ContextValues;
  /** The RPC's local name (sendEmail, ...), set by each adapter: the guard admits some on a cached key (api/guard.ts). */
  rpc?: string;
  /** Set once the call is admitted (key checked, rate limit taken), so it is done once per call. */
  principal?: Principal;
  /** The admitted key's request rate, which every answer to the call reports. */
  rate?: RateDecision;
  /** Set once the operator is admitted (the admin token, or on REST an operator's console session), so it is done once per call. */
  operator?: true;
}

/** A service's handlers as api/ writes them: each RPC takes its request and the CallContext of either adapter. */
export type Handlers<S extends DescService> = {
  [K in keyof ServiceImpl<S>]: (
    req: Parameters<ServiceImpl<S>[K]>[0],
    ctx: CallContext,
  ) => ReturnType<ServiceImpl<S>[K]>;
};

export const clientAddress = (ctx: CallContext): string => ctx.values.get(CLIENT_ADDRESS);

// RFC 6750 bearer syntax, nothing around it: the HTTP layer already strips the outer whitespace it may.
const BEARER = /^Bearer ([^\s]+)$/i;

/** The credential of an `Authorization: Bearer <credential>` header; undefined when it is missing or malformed. */
export function bearerCredential(authorization: string | null | undefined): string | undefined {
  if (authorization === null || authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/** The call's bearer credential (API key or admin token), as both adapters carry it. */
export const callCredential = (ctx: CallContext): string | undefined =>
  bearerCredential(ctx.requestHeader.get('authorization'));
