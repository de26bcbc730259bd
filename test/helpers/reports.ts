import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { createReportTokens, type ReportTokens } from '../../src/delivery/message/report-token.js';
import { makeReturnPath } from '../../src/delivery/message/return-path.js';
import { eventually } from './http.js';
import type { Stack } from './stack.js';
import { trackingKeyOf } from './stack-secrets.js';

/** The secret the fixtures' X-Mail-Report-Token headers were signed with (test/unit/inbound-feedback-service.test.ts). */
export const FIXTURE_TOKEN_SECRET = 'feedback-fixtures-report-secret';
const fixtureTokens = createReportTokens(FIXTURE_TOKEN_SECRET);

/**
 * A report fixture rewritten to be about an email of a stack: `emails` maps each fixture email id to
 * the stack's email id and the token its message carried (replacing the fixture's signed token; without
 * one, the fixture's token stays, with the email id changed, so invalid); `replace` rewrites anything else.
 */
export function reportFixture(
  name: string,
  emails: Record<string, { id: string; token?: string }>,
  replace: Record<string, string> = {},
): Buffer {
  let text = fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name), 'utf8');
  for (const [fixtureId, real] of Object.entries(emails)) {
    if (real.token !== undefined) text = text.split(fixtureTokens.sign(fixtureId)).join(real.token);
    text = text.split(fixtureId).join(real.id);
  }
  for (const [from, to] of Object.entries(replace)) text = text.split(from).join(to);
  return Buffer.from(text);
}

/**
 * Mails a message to the inbound listener over a real SMTP conversation, as a feedback loop or MTA does (null
 * sender); with `starttls`, upgraded first as MTAs do (its certificate is self-signed: not verified, as they do not).
 */
export async function mailReport(
  url: string,
  raw: Buffer,
  to: string[] = ['fbl@mailer.test'],
  options: { starttls?: boolean; localAddress?: string } = {},
): Promise<string> {
  const from = options.localAddress === undefined ? {} : { localAddress: options.localAddress };
  const transport = nodemailer.createTransport(
    options.starttls
      ? { url, requireTLS: true, tls: { rejectUnauthorized: false }, ...from }
      : { url, ignoreTLS: true, ...from },
  );
  try {
    const info = await transport.sendMail({ envelope: { from: '', to }, raw });
    return info.response;
  } finally {
    transport.close();
  }
}

/** The X-Mail-Report-Token header of an email's message as the receiving server got it. */
export async function tokenOf(stack: Stack, emailId: string): Promise<string> {
  const message = await eventually(async () =>
    stack.sink.messages.find((m) => m.parsed.headers.get('x-mail-email-id') === emailId),
  );
  const token = message.parsed.headers.get('x-mail-report-token');
  if (typeof token !== 'string') throw new Error(`the message of ${emailId} carries no report token`);
  return token;
}

/** The service's report tokens, under the key in its settings table. */
export async function stackTokens(stack: Stack): Promise<ReportTokens> {
  return createReportTokens(await trackingKeyOf(stack.mailer));
}

/** The VERP return path of an email's `recipient`th recipient's copy (its only one by default), signed as the service signs it. */
export async function returnPathOf(
  stack: Stack,
  emailId: string,
  recipient = 0,
  domain = 'rp.mailer.test',
): Promise<string> {
  return makeReturnPath(await stackTokens(stack), emailId, recipient, domain);
}
