import { describe, expect, it } from 'vitest';
import { BODY_LIMITS } from '../../src/domain/limits.js';
import { ADMIN_ROUTES, PUBLIC_ROUTES } from '../../src/http/rest-routes.js';
import { readMaxBytesFor } from '../../src/rpc/read-limits.js';

describe('gRPC read limits', () => {
  it('are the REST body limits of the same RPC, route by route', () => {
    const routes = [...PUBLIC_ROUTES, ...ADMIN_ROUTES];
    const mismatched = routes
      .filter((r) => readMaxBytesFor(r.rpc) !== (r.bodyLimit ?? BODY_LIMITS.other))
      .map((r) => `${r.method} ${r.path}: gRPC ${readMaxBytesFor(r.rpc)}, REST ${r.bodyLimit ?? BODY_LIMITS.other}`);
    expect(mismatched).toEqual([]);
  });
});
