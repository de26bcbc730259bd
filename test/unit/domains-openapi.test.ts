import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/http/openapi.js';

/**
 * Adding a domain in the OpenAPI document (issue 29: a generated client had to guess the body): both POST routes
 * take `{name}`, required and described; the records answered carry `zone_value`, described as the split form.
 */
type S = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = buildOpenApi('http://127.0.0.1:8080') as S;

describe('domains in the OpenAPI document', () => {
  it.each([
    ['the account', '/v1/mail/domains'],
    ['the operator', '/v1/mail/admin/accounts/{id}/domains'],
  ])("%s's POST %s takes {name}: a required JSON body whose name is required and described", (_, path) => {
    const post = doc.paths[path].post as S;
    expect(post.requestBody.required).toBe(true);
    const body = post.requestBody.content['application/json'].schema as S;
    expect(body.type).toBe('object');
    expect(body.required).toEqual(['name']);
    expect(Object.keys(body.properties)).toEqual(['name']);
    expect(body.properties.name).toMatchObject({ type: 'string', minLength: 1, examples: ['mail.example.com'] });
    expect(body.properties.name.description).toMatch(/^The domain to send from/);
    expect(body.additionalProperties).toBe(false);
    expect(post.responses[200].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Domain' });
  });

  it("describes each DNS record's zone_value, the value as quoted 255-character strings", () => {
    const record = doc.components.schemas.DnsRecord as S;
    expect(record.required).toEqual(expect.arrayContaining(['type', 'name', 'value', 'zone_value']));
    expect(record.properties.type).toMatchObject({ type: 'string', enum: ['TXT', 'MX'] });
    expect(record.properties.zone_value.description).toMatch(/at most 255 characters each/);
  });
});
