import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { assertStorableStrings } from '../../src/api/storable-strings.js';
import { SendBatchRequestSchema, SendEmailRequestSchema } from '../../src/gen/mail/v1/email_service_pb.js';

const NUL = '\u0000';
const LONE = '\uD800';

function refusal(schema: typeof SendEmailRequestSchema | typeof SendBatchRequestSchema, init: object): string {
  try {
    assertStorableStrings(schema, create(schema as typeof SendEmailRequestSchema, init as never));
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
}

describe('assertStorableStrings: a request PostgreSQL can store passes, and a refusal names the field', () => {
  it('passes a request of ordinary strings, emoji (paired surrogates) included, nested in template variables', () => {
    const init = {
      from: 'a@example.com',
      to: ['b@example.net'],
      tags: { t: 'v' },
      template: { id: 'tpl_x', variables: { name: 'Ada 😀', items: [{ sku: 'A-1' }, 'x', 3, null] } },
    };
    expect(refusal(SendEmailRequestSchema, init)).toBe('accepted');
  });

  it.each([
    ['a scalar field', { subject: `a${NUL}` }, 'subject: must not contain NUL'],
    ['a list item', { to: ['ok@example.net', `x${LONE}@example.net`] }, 'to[1]: must be valid Unicode'],
    ['a map key', { tags: { [`k${NUL}`]: 'v' } }, 'tags key: must not contain NUL'],
    ['a map value', { headers: { 'X-A': `v${LONE}` } }, 'headers.X-A: must be valid Unicode'],
    [
      'a value deep in the template variables',
      { template: { id: 'tpl_x', variables: { order: { items: [{ sku: 'ok' }, { sku: `b${NUL}` }] } } } },
      'template.variables.order.items[1].sku: must not contain NUL',
    ],
    [
      'a variables key that is not a simple name',
      { template: { id: 'tpl_x', variables: { 'a b': { [`k${LONE}`]: 1 } } } },
      'template.variables["a b"] key: must be valid Unicode',
    ],
  ])('names %s', (_what, init, message) => {
    expect(refusal(SendEmailRequestSchema, init)).toContain(message);
  });

  it('names a batch item by its index', () => {
    const ok = { from: 'a@example.com', to: ['b@example.net'], subject: 's', text: 't' };
    const message = refusal(SendBatchRequestSchema, { emails: [ok, ok, { ...ok, text: `t${NUL}` }] });
    expect(message).toContain('emails[2].text: must not contain NUL');
  });
});
