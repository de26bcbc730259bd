import { Code, ConnectError, type HandlerContext } from '@connectrpc/connect';
import type { DescMethod } from '@bufbuild/protobuf';
import { BODY_LIMITS } from '../domain/limits.js';
import { ERROR_TABLE } from '../errors.js';
import { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';

/**
 * The largest request message each RPC reads, as the REST gateway's body limits: the sends may carry
 * attachments, everything else is a few ids and filters. connect-es applies it to the declared length of
 * an enveloped message (before reading it), to the bytes read, and to the size after decompression
 * (zlib stops inflating there), so neither a large body nor a small compressed bomb is ever held whole.
 */
const READ_MAX_BYTES: ReadonlyMap<DescMethod, number> = new Map<DescMethod, number>([
  [EmailService.method.sendEmail, BODY_LIMITS.singleSend],
  [EmailService.method.scheduleEmail, BODY_LIMITS.singleSend],
  [EmailService.method.sendBatch, BODY_LIMITS.batch],
  // A template version holds up to 20 MB; a render's variables are as large as a send's content may be.
  [EmailService.method.createTemplate, BODY_LIMITS.template],
  [EmailService.method.updateTemplate, BODY_LIMITS.template],
  [EmailService.method.renderTemplate, BODY_LIMITS.singleSend],
  [EmailService.method.previewTemplate, BODY_LIMITS.template],
  // A suppression import's CSV: 100,000 rows with topics.
  [EmailService.method.importSuppressions, BODY_LIMITS.suppressionImport],
  [AdminService.method.importAccountSuppressions, BODY_LIMITS.suppressionImport],
  [AdminService.method.createAccountTemplate, BODY_LIMITS.template],
  [AdminService.method.updateAccountTemplate, BODY_LIMITS.template],
  [AdminService.method.previewAccountTemplate, BODY_LIMITS.template],
  [AdminService.method.renderAccountTemplate, BODY_LIMITS.singleSend],
]);

export function readMaxBytesFor(method: DescMethod): number {
  return READ_MAX_BYTES.get(method) ?? BODY_LIMITS.other;
}

// connect-es's texts for a message over readMaxBytes: "message size N is larger than configured readMaxBytes M",
// "message size is larger than ...", "message is larger than configured readMaxBytes M after decompression".
const CONNECT_READ_LIMIT = /larger than configured readMaxBytes/;

/**
 * connect-es refuses a message over the limit with its own wording and no `mail-error`, and serializes
 * that error itself (interceptors never see it). It aborts the call's signal with the error just before,
 * so this gives the error the spec's `payload too large` and a message naming the limit, as REST's 413.
 */
export function explainReadLimit(ctx: HandlerContext, limit: number): void {
  ctx.signal.addEventListener(
    'abort',
    () => {
      const err: unknown = ctx.signal.reason;
      if (!(err instanceof ConnectError) || err.code !== Code.ResourceExhausted) return;
      if (err.metadata.has('mail-error') || !CONNECT_READ_LIMIT.test(err.rawMessage)) return;
      const message = `The request message exceeds the limit of ${limit} bytes for this method`;
      err.metadata.set('mail-error', ERROR_TABLE.payload_too_large.error);
      Object.assign(err, { rawMessage: message, message: `[resource_exhausted] ${message}` });
    },
    { once: true },
  );
}
