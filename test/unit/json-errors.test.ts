import { fromJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { FieldError } from '@bufbuild/protobuf/reflect';
import { describe, expect, it } from 'vitest';
import { ListEmailsRequestSchema, SendEmailRequestSchema } from '../../src/gen/mail/v1/email_service_pb.js';
import { describeJsonError } from '../../src/http/json-errors.js';

/** The message protobuf-es itself gives for `json`, as callers read it. */
function described(schema: DescMessage, json: unknown): string {
  try {
    fromJson(schema, json as JsonValue);
  } catch (err) {
    return describeJsonError(err);
  }
  throw new Error('expected the JSON not to decode');
}

describe('describeJsonError (on the errors protobuf-es really raises)', () => {
  it.each([
    [{ to: 'a@example.net' }, 'to: expected Array, got "a@example.net"'],
    [{ subject: 42 }, 'subject: expected string, got 42'],
    [{ reply_to: [1] }, /^reply_to: list item/],
    [{ headers: 'x' }, 'headers: expected object, got "x"'],
    [{ headers: { a: 1 } }, /^headers: map entry "a"/],
    [{ attachments: [{ filename: 1 }] }, 'attachments[].filename: expected string, got 1'],
    [{ attachments: [{ content: ['aGk='] }] }, 'attachments[].content: expected string, got Array(1)'],
    [{ attachments: [{ size: 1 }] }, 'attachments[].size: unknown field'],
    [{ sender_name: 'x' }, 'sender_name: unknown field'],
  ])('%j', (json, expected) => {
    const msg = described(SendEmailRequestSchema, json);
    if (typeof expected === 'string') expect(msg).toBe(expected);
    else expect(msg).toMatch(expected);
    expect(msg).not.toContain('mail.v1');
  });

  it('query parameters: page_size that is not a number', () => {
    expect(described(ListEmailsRequestSchema, { page_size: 'ten' })).toMatch(/^page_size: /);
  });
});

describe('describeJsonError on fixed inputs', () => {
  it("turns camelCase field names into the spec's snake_case", () => {
    const cause = new FieldError(SendEmailRequestSchema.field.replyTo, 'expected Array, got 1');
    const err = new Error('cannot decode field mail.v1.SendEmailRequest.replyTo from JSON: expected Array, got 1', {
      cause,
    });
    expect(describeJsonError(err)).toBe('reply_to: expected Array, got 1');
  });

  it('keeps a message it does not recognise', () => {
    expect(describeJsonError('something else went wrong')).toBe('something else went wrong');
  });

  it('describes other message-level errors without the schema name', () => {
    expect(describeJsonError('cannot decode message mail.v1.SendEmailRequest from JSON: expected object, got 5')).toBe(
      'expected object, got 5',
    );
  });
});
