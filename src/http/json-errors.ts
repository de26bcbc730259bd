/**
 * protobuf-es reports a JSON that does not fit the schema as
 * `cannot decode field mail.v1.SendEmailRequest.to from JSON: expected Array, got "x"`; callers should read
 * `to: expected Array, got "x"`, with the spec's field names.
 */
const FIELD = /^cannot decode field mail\.v1\.(\w+)\.(\w+) from JSON: (.*)$/s;
const UNKNOWN = /^cannot decode message mail\.v1\.(\w+) from JSON: key "(.*)" is unknown$/s;
const OTHER = /^cannot decode message mail\.v1\.(\w+) from JSON: (.*)$/s;

/** Where a nested message sits in a request, for messages that do not say. */
const CONTAINER: Record<string, string> = { Attachment: 'attachments[].', SendEmailRequest: '' };

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function describeJsonError(message: string): string {
  let m = FIELD.exec(message);
  if (m) return `${CONTAINER[m[1]!] ?? ''}${snake(m[2]!)}: ${m[3]}`;
  m = UNKNOWN.exec(message);
  if (m) return `${CONTAINER[m[1]!] ?? ''}${m[2]}: unknown field`;
  m = OTHER.exec(message);
  if (m) return `${CONTAINER[m[1]!] ?? ''}${m[2]}`;
  return message;
}
