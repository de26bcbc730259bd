import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/http/openapi.js';
import { SITE_NAME } from '../../src/services/egress-status.js';

/**
 * Egress shaping's two management operations in the OpenAPI document: the site in the path carries the pattern the
 * service checks (so a schema-valid name is a site or a 404, never the 400 the contract fuzzer would flag), within
 * the router's 100 characters; the answers' times are ISO 8601 or empty.
 */
type S = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = buildOpenApi('http://127.0.0.1:8080') as S;
const op = (method: string, path: string): S => doc.paths[path][method];
const schema = (name: string): S => doc.components.schemas[name];

describe('egress in the OpenAPI document', () => {
  it('documents GET /admin/egress and the resume with the site pattern the service checks', () => {
    const get = op('get', '/v1/mail/admin/egress');
    expect(get).toMatchObject({ operationId: 'getEgressStatus', tags: ['admin'], security: [{ adminToken: [] }] });
    expect(get.parameters).toEqual([]);
    expect(get.responses[200].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/GetEgressStatusResponse',
    });

    const resume = op('delete', '/v1/mail/admin/egress/sites/{site}/suspension');
    expect(resume.operationId).toBe('resumeEgressSite');
    expect(resume.parameters).toEqual([
      { name: 'site', in: 'path', required: true, schema: { type: 'string', minLength: 1, pattern: SITE_NAME.source } },
    ]);
    for (const status of ['200', '400', '401', '404', '414', '429', '503'])
      expect(resume.responses[status]).toBeDefined();
    expect(resume.responses[200].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/EgressSite',
    });
  });

  it("bounds a site name within the router's longest path parameter, and refuses what a path cannot carry", () => {
    expect(SITE_NAME.test('a'.repeat(100))).toBe(true);
    expect(SITE_NAME.test('a'.repeat(101))).toBe(false);
    for (const junk of ['', '.', '..', '-x', 'a/b', 'a b', 'a%2Fb', 'x\u0000'])
      expect(SITE_NAME.test(junk), JSON.stringify(junk)).toBe(false);
  });

  it("states the answers' times as ISO 8601 or empty, and the warm-up's -1 for no limit", () => {
    const site = schema('EgressSite');
    const time = new RegExp(site.properties.suspended_until.pattern as string);
    expect(['', new Date().toISOString()].every((t) => time.test(t))).toBe(true);
    expect(time.test('tomorrow')).toBe(false);
    expect(site.required).toEqual(expect.arrayContaining(['site', 'suspended_until', 'last_replies', 'updated_at']));
    expect(schema('EgressSource').properties.warmup_limit_today.minimum).toBe(-1);
    expect(Object.keys(schema('GetEgressStatusResponse').properties)).toEqual(['rules', 'sites', 'pools']);
  });
});
