import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { EmailRow, StoredAttachment } from '../db/repos/emails-repo.js';
import { REPORT_TOKEN_HEADER } from './report-token.js';

/**
 * The MIME message of a stored email. Bcc recipients go into the envelope only (nodemailer leaves them
 * out of the headers). The Message-ID was fixed when the email was accepted, so every attempt carries
 * the same one and receivers can tell a resend from a new message. `reportToken` (report-token.ts) comes
 * back quoted in complaint and bounce reports and proves them genuine.
 */
export function composeMessage(email: EmailRow, attachments: StoredAttachment[], reportToken: string): SendMailOptions {
  return {
    from: email.from,
    to: email.to,
    cc: email.cc.length > 0 ? email.cc : undefined,
    bcc: email.bcc.length > 0 ? email.bcc : undefined,
    replyTo: email.replyTo.length > 0 ? email.replyTo : undefined,
    subject: email.subject,
    html: email.html === '' ? undefined : email.html,
    text: email.text === '' ? undefined : email.text,
    messageId: email.headerMessageId,
    date: email.createdAt,
    headers: { ...email.headers, 'X-Mail-Email-Id': email.id, [REPORT_TOKEN_HEADER]: reportToken },
    attachments: attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
    // Content comes only from the request: never let a value make nodemailer read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}
