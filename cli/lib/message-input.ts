import fs from 'node:fs/promises';
import path from 'node:path';
import { Flags } from '@oclif/core';
import { usageError } from './base-command.js';
import { sendTemplateFlags, templateRefFromFlags, type SendTemplateFlagValues } from './template-input.js';
import type { AttachmentInput, EmailDraft } from '../../src/domain/email-draft.js';

/** The fields of an email, as flags: shared by `emails send` and `scheduled create`. */
export const messageFlags = {
  from: Flags.string({
    char: 'f',
    summary: 'Sender address, `name@domain` or `Name <name@domain>`; its domain must be verified.',
    required: true,
    helpGroup: 'MESSAGE',
  }),
  to: Flags.string({
    char: 't',
    summary: 'Recipient (repeatable).',
    multiple: true,
    required: true,
    helpGroup: 'MESSAGE',
  }),
  cc: Flags.string({ summary: 'CC recipient (repeatable).', multiple: true, helpGroup: 'MESSAGE' }),
  bcc: Flags.string({ summary: 'BCC recipient (repeatable).', multiple: true, helpGroup: 'MESSAGE' }),
  'reply-to': Flags.string({ summary: 'Reply-To address (repeatable).', multiple: true, helpGroup: 'MESSAGE' }),
  subject: Flags.string({
    char: 's',
    summary: 'Subject (up to 998 characters). Required unless --template gives it.',
    exactlyOne: ['subject', 'template'],
    helpGroup: 'MESSAGE',
  }),
  html: Flags.string({ summary: 'HTML body.', exclusive: ['html-file'], helpGroup: 'MESSAGE' }),
  'html-file': Flags.string({
    summary: 'Read the HTML body from this file.',
    exclusive: ['html'],
    helpGroup: 'MESSAGE',
  }),
  text: Flags.string({ summary: 'Plain-text body.', exclusive: ['text-file'], helpGroup: 'MESSAGE' }),
  'text-file': Flags.string({
    summary: 'Read the plain-text body from this file.',
    exclusive: ['text'],
    helpGroup: 'MESSAGE',
  }),
  attach: Flags.string({
    summary: 'Attach a file (repeatable). Its media type is guessed from the extension; `FILE;type=TYPE` sets it.',
    multiple: true,
    helpGroup: 'MESSAGE',
  }),
  header: Flags.string({ summary: 'Custom header `Name: value` (repeatable).', multiple: true, helpGroup: 'MESSAGE' }),
  tag: Flags.string({ summary: 'Tag `name=value` (repeatable).', multiple: true, helpGroup: 'MESSAGE' }),
  stream: Flags.option({
    options: ['transactional', 'broadcast'] as const,
    summary: 'transactional (the default) or broadcast: one --to only, and it carries one-click unsubscribe.',
    helpGroup: 'MESSAGE',
  })(),
  topic: Flags.string({
    summary: "A broadcast email's topic (1-64 of A-Z a-z 0-9 . _ -): what an unsubscribe from it covers.",
    helpGroup: 'MESSAGE',
  }),
  // A template gives the subject and bodies, rendered when the email is accepted (the API refuses both).
  ...sendTemplateFlags(['subject', 'html', 'html-file', 'text', 'text-file']),
  'idempotency-key': Flags.string({
    summary: 'Idempotency-Key: the same key and body within 24 hours sends only once.',
  }),
};

/** The Idempotency-Key header of a send, when --idempotency-key is given. */
export function idempotencyHeaders(flags: {
  'idempotency-key'?: string | undefined;
}): Record<string, string> | undefined {
  return flags['idempotency-key'] ? { 'idempotency-key': flags['idempotency-key'] } : undefined;
}

export interface MessageFlagValues extends SendTemplateFlagValues {
  from: string;
  to: string[];
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  'reply-to'?: string[] | undefined;
  subject?: string | undefined;
  html?: string | undefined;
  'html-file'?: string | undefined;
  text?: string | undefined;
  'text-file'?: string | undefined;
  attach?: string[] | undefined;
  header?: string[] | undefined;
  tag?: string[] | undefined;
  stream?: string | undefined;
  topic?: string | undefined;
}

/** An attachment as the API takes it (content base64). */
/** An attachment as a send request carries it (content base64-encoded). */
export type AttachmentFields = AttachmentInput;

/** The fields of a SendEmailRequest, as a plain object (the domain's draft): also the start of a ScheduleEmailRequest. */
export type MessageFields = EmailDraft;

/** The SendEmailRequest fields the flags describe (files read, attachments base64-encoded). */
export async function messageFromFlags(f: MessageFlagValues): Promise<MessageFields> {
  const html = f['html-file'] !== undefined ? await readText(f['html-file'], '--html-file') : (f.html ?? '');
  const text = f['text-file'] !== undefined ? await readText(f['text-file'], '--text-file') : (f.text ?? '');
  return {
    from: f.from,
    to: f.to,
    cc: f.cc ?? [],
    bcc: f.bcc ?? [],
    replyTo: f['reply-to'] ?? [],
    subject: f.subject ?? '',
    html,
    text,
    attachments: await Promise.all((f.attach ?? []).map((spec) => attachmentFromFile(spec))),
    headers: parseHeaders(f.header ?? []),
    tags: parseTags(f.tag ?? []),
    template: await templateRefFromFlags(f),
    stream: f.stream ?? '',
    topic: f.topic ?? '',
  };
}

async function readText(file: string, flag: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** `FILE` or `FILE;type=media/type`: the file's bytes, base64, under its base name. */
export async function attachmentFromFile(spec: string, relativeTo = '.'): Promise<AttachmentFields> {
  const m = /^(.*);type=([^;]+)$/.exec(spec);
  const file = path.resolve(relativeTo, m ? m[1]! : spec);
  let content: Buffer;
  try {
    content = await fs.readFile(file);
  } catch (err) {
    throw usageError(`--attach: cannot read ${file}: ${(err as Error).message}`);
  }
  return {
    filename: path.basename(file),
    content: content.toString('base64'),
    contentType: m ? m[2]! : guessType(file),
  };
}

const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.ics': 'text/calendar',
  '.xml': 'application/xml',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The media type of a file by its extension; `application/octet-stream` when unknown. */
export const guessType = (file: string): string =>
  TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';

/** `Name: value` pairs (the value may itself hold colons). */
export function parseHeaders(specs: string[], flag = '--header'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const i = spec.indexOf(':');
    if (i <= 0) throw usageError(`${flag} must be "Name: value", got "${spec}"`);
    out[spec.slice(0, i).trim()] = spec.slice(i + 1).trim();
  }
  return out;
}

/** `name=value` pairs. */
export function parseTags(specs: string[], flag = '--tag'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const spec of specs) {
    const i = spec.indexOf('=');
    if (i <= 0) throw usageError(`${flag} must be "name=value", got "${spec}"`);
    out[spec.slice(0, i)] = spec.slice(i + 1);
  }
  return out;
}
