import libmime from 'libmime';
import type { ParsedMail } from 'mailparser';
import type { TemplateRefInput } from '../domain/entities/templates.js';
import type { WireJsonObject } from '../domain/json.js';
import { invalid } from '../errors.js';

/**
 * SMTP submission naming a template (CONTRACT.md "Templates"; docs/templates.md): the headers below stand for
 * a send's `template: {id, variables, locale, version}`. The message then carries no content of its own (no
 * Subject, an empty body), as an API send with a template gives no subject, html or text; attachments and
 * every other header are the message's. The headers are the service's to read and are never sent on.
 */
export const TEMPLATE_HEADERS = {
  id: 'x-mail-template',
  variables: 'x-mail-template-variables',
  locale: 'x-mail-template-locale',
  version: 'x-mail-template-version',
} as const;

const NAMES = Object.values(TEMPLATE_HEADERS);

/**
 * One header's value: unfolded, its RFC 2047 encoded words decoded (mail clients encode non-ASCII text, and
 * some encode JSON's quotes too); 400 when given more than once.
 */
export function singleHeader(parsed: ParsedMail, name: string): string | undefined {
  const lines = parsed.headerLines.filter((h) => h.key === name);
  if (lines.length > 1) throw invalid(`${name}: give the header once (it appears ${lines.length} times)`);
  const line = lines[0]?.line;
  if (line === undefined) return undefined;
  const value = line.slice(line.indexOf(':') + 1).replace(/\r?\n(?=[ \t])/g, '');
  return libmime.decodeWords(value).trim();
}

function variablesOf(raw: string | undefined): WireJsonObject | undefined {
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw invalid(`${TEMPLATE_HEADERS.variables} must be a JSON object: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`${TEMPLATE_HEADERS.variables} must be a JSON object ({"name": "Ada"})`);
  return value as WireJsonObject;
}

function versionOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) throw invalid(`${TEMPLATE_HEADERS.version} must be a version number from 1`);
  return Number(raw);
}

/** The template a submitted message names, or undefined; 400 for a malformed header or content beside it. */
export function templateOfMessage(
  parsed: ParsedMail,
  content: { subject: string; text: string; html: string },
): TemplateRefInput | undefined {
  const id = singleHeader(parsed, TEMPLATE_HEADERS.id);
  if (id === undefined) {
    const stray = NAMES.find((n) => parsed.headerLines.some((h) => h.key === n));
    if (stray) throw invalid(`${stray} needs ${TEMPLATE_HEADERS.id}: name the template`);
    return undefined;
  }
  if (id === '') throw invalid(`${TEMPLATE_HEADERS.id} is empty: give the template's id or alias`);
  if (content.subject.trim() !== '' || content.text.trim() !== '' || content.html.trim() !== '')
    throw invalid(
      `a message naming a template (${TEMPLATE_HEADERS.id}) must have no Subject and an empty body: the template gives them`,
    );
  return {
    id,
    variables: variablesOf(singleHeader(parsed, TEMPLATE_HEADERS.variables)),
    locale: singleHeader(parsed, TEMPLATE_HEADERS.locale) ?? '',
    version: versionOf(singleHeader(parsed, TEMPLATE_HEADERS.version)),
  };
}
