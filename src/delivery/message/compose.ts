import type { SendMailOptions } from 'nodemailer/lib/mailer';
import type { Mailbox } from '../../domain/address.js';
import type { EmailRow, StoredAttachment } from '../../domain/entities/emails.js';
import type { DkimSigningKey } from '../dkim/dkim-keyring.js';
import { parsedPrivateKey } from '../dkim/dkim-key-object.js';
import { REPORT_TOKEN_HEADER } from './report-token.js';
import { listUnsubscribeHeaders, type ListUnsubscribe } from './unsubscribe-token.js';

/** nodemailer's address object: it encodes the name itself, so no caller text is ever re-parsed as a list. */
const addressed = (m: Mailbox) => ({ name: m.name, address: m.address });
const listOf = (list: Mailbox[]) => (list.length > 0 ? list.map(addressed) : undefined);

/** How one attempt sends an email: to whom, with which proofs, signed with which key. */
export interface Sending {
  envelopeTo: string[];
  reportToken: string;
  /** The envelope sender: the VERP return path naming the email (return-path.ts). */
  returnPath: string;
  dkim: DkimSigningKey | undefined;
  /** A broadcast email's one-click unsubscribe URL and address (unsubscribe-token.ts); undefined for transactional mail. */
  unsubscribe?: ListUnsubscribe;
}

/** The fields of RFC 2369 and RFC 8058 the service writes on broadcast mail, in lower case. */
const LIST_UNSUBSCRIBE_FIELDS: ReadonlySet<string> = new Set(['list-unsubscribe', 'list-unsubscribe-post']);

/**
 * The caller's own headers of an email, and on broadcast mail the service's List-Unsubscribe pair in place of any
 * the caller gave under those names, in any case: nodemailer adds every key it is given (two spellings of one
 * name would be two fields), and a caller's field would either point receivers elsewhere than the signed
 * token or make a second field a receiver might act on. On transactional mail the service adds neither and
 * the caller's headers pass as they always have.
 */
function headersOf(email: EmailRow, unsubscribe: ListUnsubscribe | undefined): Record<string, string> {
  if (unsubscribe === undefined) return email.headers;
  const own = Object.entries(email.headers).filter(([name]) => !LIST_UNSUBSCRIBE_FIELDS.has(name.toLowerCase()));
  return { ...Object.fromEntries(own), ...listUnsubscribeHeaders(unsubscribe) };
}

/**
 * The headers the DKIM signature covers (RFC 6376 5.4.1's list plus our own): what a receiver shows or acts on,
 * so none of it can be changed in transit without breaking the signature. Relaxed/relaxed canonicalization
 * (nodemailer's only one) survives the re-folding relays do.
 */
const SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'X-Mail-Email-Id',
].join(':');

/** A message for nodemailer with the envelope it goes out under (the return path, the recipients left to try). */
export type ComposedMessage = SendMailOptions & { envelope: { from: string; to: string[] } };

/**
 * The MIME message of a stored email, built from the mailboxes parsed at acceptance, and its SMTP envelope,
 * set explicitly: the envelope sender is the email's return path (so bounces come back to the service, and
 * SPF is checked against the return-path domain, not the customer's), and the recipients are
 * exactly `envelopeTo` (the stored to, cc and bcc less any suppressed), never what nodemailer would derive
 * from the headers. Bcc recipients are in the envelope only. The Message-ID was fixed when the email was
 * accepted, so every attempt carries the same one and receivers can tell a resend from a new message.
 * `reportToken` (report-token.ts) comes back quoted in complaint and bounce reports and proves them genuine.
 */
export function composeMessage(email: EmailRow, attachments: StoredAttachment[], send: Sending): ComposedMessage {
  return {
    from: addressed(email.from),
    to: listOf(email.to),
    cc: listOf(email.cc),
    replyTo: listOf(email.replyTo),
    envelope: { from: send.returnPath, to: send.envelopeTo },
    subject: email.subject,
    html: email.html === '' ? undefined : email.html,
    text: email.text === '' ? undefined : email.text,
    messageId: email.headerMessageId,
    date: email.createdAt,
    headers: {
      ...headersOf(email, send.unsubscribe),
      'X-Mail-Email-Id': email.id,
      [REPORT_TOKEN_HEADER]: send.reportToken,
    },
    // A content id makes the part inline (Content-ID: <id>, in multipart/related with the html that shows it).
    attachments: attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType,
      ...(a.contentId === '' ? {} : { cid: a.contentId }),
    })),
    // Content comes only from the request: never let a value make nodemailer read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
    // nodemailer hands privateKey to crypto's sign(), which takes a KeyObject as well as PEM text.
    ...(send.dkim
      ? { dkim: { ...send.dkim, privateKey: parsedPrivateKey(send.dkim), headerFieldNames: SIGNED_HEADERS } }
      : {}),
  };
}
