import { isFieldError } from '@bufbuild/protobuf/reflect';

/**
 * protobuf-es reports a JSON that does not fit the schema as `cannot decode field
 * mail.v1.SendEmailRequest.to from JSON: expected Array, got "x"`; callers should read `to: expected Array,
 * got "x"`, with the spec's field names.
 *
 * A wrong value comes with its FieldError as the cause, which names the field and its message: that is read.
 * An unknown key and the other message-level errors are plain Errors whose text is all there is (protobuf-es
 * 2.x gives them no class or fields), so those two shapes stay textual.
 */
const UNKNOWN = /^cannot decode message mail\.v1\.(\w+) from JSON: key "(.*)" is unknown$/s;
const OTHER = /^cannot decode message mail\.v1\.(\w+) from JSON: (.*)$/s;

/** Where a nested message sits in a request, for messages that do not say. */
const CONTAINER: Record<string, string> = { Attachment: 'attachments[].', SendEmailRequest: '' };

/** What fromJson threw, as a client reads it. */
export function describeJsonError(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  if (isFieldError(cause)) {
    const field = cause.field();
    return `${CONTAINER[field.parent.name] ?? ''}${field.name}: ${cause.message}`;
  }
  const message = err instanceof Error ? err.message : String(err);
  let m = UNKNOWN.exec(message);
  if (m) return `${CONTAINER[m[1]!] ?? ''}${m[2]}: unknown field`;
  m = OTHER.exec(message);
  if (m) return `${CONTAINER[m[1]!] ?? ''}${m[2]}`;
  return message;
}
