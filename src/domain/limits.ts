/** The spec's "Limits" table and the decisions where it is silent (docs/api.md, "Limits" and "Decisions"). */

const MiB = 1024 * 1024;

export const LIMITS = {
  subjectChars: 998,
  htmlBytes: 5 * MiB,
  textBytes: 5 * MiB,
  attachments: 10,
  attachmentBytes: 10 * MiB,
  /** Subject, bodies, custom headers and decoded attachments together. */
  emailBytes: 10 * MiB,
  customHeaders: 50,
  recipients: 50,
  batchEmails: 100,
  pageSizeDefault: 20,
  pageSizeMax: 100,
  // Where the spec is silent (documented in docs/api.md).
  tags: 50,
  tagKeyChars: 256,
  tagValueChars: 256,
  headerNameChars: 200,
  headerValueChars: 2000,
  filenameChars: 255,
  addressChars: 320,
  replyTo: 10,
  contentTypeChars: 255,
  contentIdChars: 255,
} as const;

export const DAILY_QUOTA = { newAccount: 100, verifiedAccount: 1000 } as const;

/** How long an Idempotency-Key remembers its first answer. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/** Request bodies the REST gateway reads at most, before any field is looked at. */
export const BODY_LIMITS = {
  /** A 10 MiB email is about 13.4 MiB as base64 JSON; JSON escaping of HTML can add more. */
  singleSend: 32 * MiB,
  batch: 64 * MiB,
  /** A template version holds up to 20 MiB of content (domain/template-fields.ts); JSON escaping can double it. */
  template: 48 * MiB,
  /**
   * A suppression import (text/csv): 100,000 rows of the longest address (320 characters), `broadcast` and the
   * longest topic (64), each field quoted, CRLF: about 40 MB.
   */
  suppressionImport: 48 * MiB,
  other: 1 * MiB,
} as const;

export function formatBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MB` : `${n} bytes`;
}
