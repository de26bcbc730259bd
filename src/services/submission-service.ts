import { simpleParser } from 'mailparser';
import { readMailbox } from '../domain/address.js';
import { assertAllowed } from '../domain/permissions.js';
import type { AuthService, Principal } from './auth-service.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SendService } from './send-service.js';
import type { SenderCheck } from './sender-check.js';
import { draftFromMessage } from './submission-draft.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface SubmissionDeps {
  auth: Pick<AuthService, 'authenticate'>;
  /** The REST and gRPC API's own limiter: a key's SMTP messages and API requests share its rate. */
  rateLimiter: RateLimiter;
  usage: Pick<UsageRecorder, 'request'>;
  /** The service POST /emails calls: permission, validation, sender rules, quota and storage. */
  send: Pick<SendService, 'send'>;
  assertMaySendFrom: SenderCheck;
}

/** What an authenticated SMTP session holds: the API key, read afresh for each message, and its id. */
export interface SubmissionCredential {
  apiKey: string;
  /** Whose bytes in flight the session's messages count in, with the key's REST and gRPC requests. */
  keyId: string;
}

/**
 * SMTP submission as the API: each message is one request of its API key, admitted like one (the key read
 * afresh, one token of its rate limit, counted in its usage statistics) and sent through the same
 * SendService.send as POST /emails with the send request the message stands for (submission-draft.ts). So
 * the email has the same rules, the same `job_type` (`direct`) and the same delivery as one sent by the API.
 *
 * The envelope sender (MAIL FROM) is checked early against the same sender rules (the key's allowed_domains,
 * then a verified domain of the account), so a client learns at once, before sending the body, that it may
 * not send from there; the From header is what the email is sent from and is judged again by the send. The
 * two need not be the same domain; the null sender is accepted, and then only From is judged. The envelope
 * sender itself is not kept: the service sends with its own return path, as for any email.
 */
export function createSubmissionService(deps: SubmissionDeps) {
  async function admit(credential: SubmissionCredential): Promise<Principal> {
    return deps.auth.authenticate(credential.apiKey);
  }

  /** Runs one step of a message as part of the key's request: a failure counts as a failed request. */
  async function counted<T>(principal: Principal, run: () => Promise<T>, succeeded: boolean): Promise<T> {
    try {
      const result = await run();
      if (succeeded) deps.usage.request(principal.keyId, false);
      return result;
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      throw err;
    }
  }

  return {
    async login(password: string): Promise<SubmissionCredential> {
      const principal = await deps.auth.authenticate(password);
      return { apiKey: password, keyId: principal.keyId };
    },

    bytesKey: (credential: SubmissionCredential): string => credential.keyId,

    async beginMessage(credential: SubmissionCredential, mailFrom: string): Promise<void> {
      const principal = await admit(credential);
      await counted(
        principal,
        async () => {
          assertAllowed(principal.permission, principal.accountStatus, 'send');
          await deps.rateLimiter.take(principal.keyId, principal.rateLimit);
          const sender = mailFrom === '' ? undefined : readMailbox(mailFrom);
          if (sender !== undefined && typeof sender !== 'string')
            await deps.assertMaySendFrom(principal, sender.domain);
        },
        false,
      );
    },

    async submit(credential: SubmissionCredential, raw: Buffer, envelope: { rcptTo: string[] }): Promise<string> {
      const principal = await admit(credential);
      return counted(
        principal,
        async () => {
          // No text is made from html nor the reverse, and cid: links stay as they are (the API's bodies are as given).
          const parsed = await simpleParser(raw, {
            skipHtmlToText: true,
            skipTextToHtml: true,
            skipTextLinks: true,
            skipImageLinks: true,
          });
          const { id } = await deps.send.send(principal, draftFromMessage(parsed, envelope.rcptTo));
          return id;
        },
        true,
      );
    },
  };
}
export type SubmissionService = ReturnType<typeof createSubmissionService>;
