import { create, type DescMessage } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import type { AttachmentInput, EmailDraft } from '../../src/domain/email-draft.js';
import type { TemplateRefInput } from '../../src/domain/entities/templates.js';
import { TemplateRefSchema } from '../../src/gen/mail/v1/templates_pb.js';
import { ScheduleEmailRequestSchema, SendEmailRequestSchema } from '../../src/gen/mail/v1/email_service_pb.js';
import { AttachmentSchema } from '../../src/gen/mail/v1/types_pb.js';

/*
 * domain/ may not import the generated code, so EmailDraft is written by hand; these tests keep it the same
 * as the proto's SendEmailRequest, or a field added to the proto would be dropped without a word. The
 * Records name each field of the interface once: the compiler refuses one missing or one too many.
 */
const DRAFT_FIELDS: Record<keyof EmailDraft, true> = {
  from: true,
  to: true,
  cc: true,
  bcc: true,
  replyTo: true,
  subject: true,
  html: true,
  text: true,
  attachments: true,
  headers: true,
  tags: true,
  template: true,
  stream: true,
  topic: true,
};
const TEMPLATE_REF_FIELDS: Record<keyof TemplateRefInput, true> = {
  id: true,
  variables: true,
  locale: true,
  version: true,
};
const ATTACHMENT_FIELDS: Record<keyof AttachmentInput, true> = {
  filename: true,
  content: true,
  contentType: true,
  contentId: true,
};

const fieldsOf = (schema: DescMessage) => schema.fields.map((f) => f.localName).sort();

describe('EmailDraft is the proto SendEmailRequest', () => {
  it('has exactly its fields', () => {
    expect(Object.keys(DRAFT_FIELDS).sort()).toEqual(fieldsOf(SendEmailRequestSchema));
  });

  it('has exactly the fields of its Attachment', () => {
    expect(Object.keys(ATTACHMENT_FIELDS).sort()).toEqual(fieldsOf(AttachmentSchema));
  });

  it('has exactly the fields of its TemplateRef', () => {
    expect(Object.keys(TEMPLATE_REF_FIELDS).sort()).toEqual(fieldsOf(TemplateRefSchema));
  });

  it('is what ScheduleEmailRequest holds besides scheduled_at', () => {
    expect(fieldsOf(ScheduleEmailRequestSchema)).toEqual([...Object.keys(DRAFT_FIELDS), 'scheduledAt'].sort());
  });

  it('takes the generated messages as they are, field types included', () => {
    const wire: EmailDraft = create(SendEmailRequestSchema, {
      from: 'a@example.com',
      attachments: [{ filename: 'f' }],
      template: { id: 'welcome', variables: { name: 'Ada', items: [1, { a: null }] }, locale: 'de', version: 2 },
    });
    const scheduled: EmailDraft & { scheduledAt: string } = create(ScheduleEmailRequestSchema, { scheduledAt: 'x' });
    expect([wire.from, wire.attachments[0]!.filename, scheduled.scheduledAt]).toEqual(['a@example.com', 'f', 'x']);
    expect(wire.template?.variables).toEqual({ name: 'Ada', items: [1, { a: null }] });
  });
});
