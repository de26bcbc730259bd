import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Stack } from './stack.js';

/**
 * Mails a message into the stack's inbound listener (its MX) over a real SMTP conversation, as a sending MTA
 * would: nodemailer builds the message from `mail` (from, to, subject, html, attachments, inReplyTo, ...) and
 * delivers it to the envelope recipients. Answers the listener's final reply (`250 ...`).
 */
export async function deliverInbound(stack: Stack, mail: Mail.Options): Promise<string> {
  const url = stack.mailer.inboundUrl;
  if (!url) throw new Error('the stack runs no inbound listener');
  const transport = nodemailer.createTransport({ url, ignoreTLS: true });
  try {
    const info = await transport.sendMail(mail);
    return info.response;
  } finally {
    transport.close();
  }
}

/** A 1×1 PNG, for an inline image (cid:) or an attachment. */
export const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
