import { fromJson, toJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { SendBatchRequestSchema, SendEmailRequestSchema } from '../../src/gen/mail/v1/email_service_pb.js';
import { RenderTemplateRequestSchema } from '../../src/gen/mail/v1/templates_pb.js';
import { PASSED_DEPTH, passStructsThrough } from '../../src/http/json-passthrough.js';

/** Decoded with the Structs passed through, as the REST gateway does. */
function decodePassed(schema: DescMessage, input: Record<string, unknown>) {
  const passed = passStructsThrough(schema, input);
  const message = fromJson(schema, passed.input as JsonValue);
  passed.restore(message);
  return message;
}

const decodeSend = (input: Record<string, unknown>) =>
  decodePassed(SendEmailRequestSchema, input) as ReturnType<typeof fromJson<typeof SendEmailRequestSchema>>;

const variables = () => ({
  name: 'Ada',
  n: 3.5,
  yes: true,
  none: null,
  order: { items: [{ sku: 'A-1', qty: 2 }, 'x', [1, [2]]], total: '10.00' },
  ['__proto__']: { polluted: true },
});

describe('passStructsThrough: Struct fields reach the message as fromJson would put them there', () => {
  it.each([
    [
      'a send',
      SendEmailRequestSchema,
      { from: 'a@example.com', to: ['b@example.net'], template: { id: 'tpl_1', variables: variables(), locale: 'de' } },
    ],
    ['a render', RenderTemplateRequestSchema, { id: 'tpl_1', variables: variables() }],
    [
      'a batch, item by item',
      SendBatchRequestSchema,
      {
        emails: [
          { from: 'a@example.com', to: ['b@example.net'], template: { id: 'tpl_1', variables: variables() } },
          { from: 'a@example.com', to: ['b@example.net'], subject: 's', text: 't' },
          { from: 'a@example.com', to: ['b@example.net'], template: { variables: { only: 'variables' } } },
        ],
      },
    ],
  ])('%s', (_what, schema, input) => {
    const input2 = JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
    const expected = fromJson(schema as DescMessage, JSON.parse(JSON.stringify(input)) as JsonValue);
    const actual = decodePassed(schema as DescMessage, input2);
    expect(toJson(schema as DescMessage, actual)).toEqual(toJson(schema as DescMessage, expected));
    // The very object JSON.parse made is the one in the message, and the input is left as it was.
    expect(JSON.stringify(input2)).toBe(JSON.stringify(input));
  });

  it('hands over the parsed object itself, with an own __proto__ key kept as data', () => {
    const vars = JSON.parse('{"__proto__": {"x": 1}, "a": "b"}') as Record<string, unknown>;
    const message = decodeSend({ template: { id: 'tpl_1', variables: vars } });
    expect(message.template?.variables).toBe(vars);
    expect(Object.getPrototypeOf(message.template?.variables)).toBe(Object.prototype);
  });

  it.each([
    ['an array', []],
    ['a string', 'x'],
    ['a number', 1],
  ])('leaves %s for fromJson to refuse as before', (_what, bad) => {
    const input = { template: { id: 'tpl_1', variables: bad } };
    expect(() => decodeSend(input)).toThrow(/variables|Struct/);
  });

  it('treats null as fromJson does (no variables)', () => {
    const message = decodeSend({ template: { id: 'tpl_1', variables: null } });
    expect(message.template?.variables).toBeUndefined();
  });

  it('leaves an object nested deeper than PASSED_DEPTH to fromJson, whose recursion limit refuses the deepest', () => {
    const nested = (levels: number): unknown => (levels === 0 ? 'x' : { a: nested(levels - 1) });
    const passedThrough = { list: JSON.parse(`${'['.repeat(PASSED_DEPTH - 1)}1${']'.repeat(PASSED_DEPTH - 1)}`) };
    const shallow = decodeSend({ template: { id: 'tpl_1', variables: passedThrough } });
    expect(shallow.template?.variables).toBe(passedThrough);
    const deeper = nested(PASSED_DEPTH + 5) as Record<string, unknown>;
    const decoded = decodeSend({ template: { id: 'tpl_1', variables: deeper } });
    expect(decoded.template?.variables).not.toBe(deeper);
    expect(decoded.template?.variables).toEqual(deeper);
    const n = 100_000;
    const deepest = JSON.parse(`{"body":${'['.repeat(n)}"x"${']'.repeat(n)}}`) as Record<string, unknown>;
    expect(() => decodeSend({ template: { id: 'tpl_1', variables: deepest } })).toThrow(/maximum recursion depth/);
  });
});
