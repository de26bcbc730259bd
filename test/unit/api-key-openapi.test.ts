import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/http/openapi.js';

type S = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON document
const doc = buildOpenApi('http://127.0.0.1:8080') as S;
const op = (method: string, path: string): S => doc.paths[path][method];
const body = (method: string, path: string): S => op(method, path).requestBody.content['application/json'].schema;

describe("the OpenAPI document's API keys (issue 27)", () => {
  it('puts the public key operations under the account tag, with their own ids, the management ones ending in Admin', () => {
    const ids = [
      ['post', '/v1/mail/api-keys'],
      ['get', '/v1/mail/api-keys'],
      ['delete', '/v1/mail/api-keys/{id}'],
    ].map(([m, p]) => {
      expect(op(m!, p!).tags, `${m} ${p}`).toEqual(['account']);
      return op(m!, p!).operationId as string;
    });
    expect(ids).toEqual(['createApiKey', 'listApiKeys', 'deleteApiKey']);
    expect(op('post', '/v1/mail/admin/accounts/{id}/api-keys').operationId).toBe('createApiKeyAdmin');
    expect(op('get', '/v1/mail/api-keys').parameters.map((p: S) => p.name)).toEqual(['page', 'page_size']);
    // The rules no schema states, in words: the limits' bounds, who may, and that a key may delete itself.
    expect(op('post', '/v1/mail/api-keys').description).toMatch(
      /MAILER_RATE_LIMIT.*daily_quota.*expires_at.*permission all/,
    );
    expect(op('post', '/v1/mail/admin/accounts/{id}/api-keys').description).toMatch(/MAILER_RATE_LIMIT/);
    expect(op('delete', '/v1/mail/api-keys/{id}').description).toMatch(
      /Another account's key is a 404\. A key may delete itself/,
    );
  });

  it("states a new key's limits alike on both APIs, and the answer's", () => {
    for (const path of ['/v1/mail/api-keys', '/v1/mail/admin/accounts/{id}/api-keys']) {
      const props = body('post', path).properties;
      expect(props.rate_limit, path).toMatchObject({ type: 'integer', minimum: 1 });
      expect(props.rate_limit.description).toMatch(/MAILER_RATE_LIMIT/);
      expect(props.daily_quota, path).toMatchObject({ type: 'integer', minimum: 0 });
      expect(props.daily_quota.description).toMatch(/account's daily_quota/);
      expect(props.expires_at, path).toMatchObject({ type: 'string', format: 'date-time' });
    }
    const key = doc.components.schemas.ApiKey.properties;
    expect(key.expires_at).toMatchObject({ format: 'date-time' });
    expect(key.last_used_at).toMatchObject({ format: 'date-time' });
    expect(doc.components.schemas.ApiKeyUsage.properties.sent_today).toMatchObject({ minimum: 0 });
  });
});
