/**
 * Accounts, domains and keys made through the real management API, for tests that need more than the
 * seeded default account.
 */
import { expect } from 'vitest';
import { call, type JsonResponse } from './http.js';
import { ADMIN_TOKEN, type Stack } from './stack.js';

/** A management API call with the admin token; fails the test on anything but the expected status. */
export async function admin<T = Record<string, unknown>>(
  stack: Stack,
  method: string,
  path: string,
  body?: unknown,
  expectStatus = 200,
): Promise<JsonResponse<T>> {
  const res = await call<T>(method, `${stack.admin}${path}`, {
    token: ADMIN_TOKEN,
    ...(body !== undefined ? { body } : {}),
  });
  if (res.status !== expectStatus)
    throw new Error(`${method} ${path}: expected ${expectStatus}, got ${res.status} ${res.text}`);
  return res;
}

export async function createAccount(stack: Stack, name: string): Promise<string> {
  const res = await admin<{ id: string }>(stack, 'POST', '/accounts', { name });
  return res.body.id;
}

/** Adds a domain to an account; `verify` force-verifies it (operator override). Answers the domain id. */
export async function addDomain(stack: Stack, accountId: string, name: string, verify = true): Promise<string> {
  const res = await admin<{ id: string }>(stack, 'POST', `/accounts/${accountId}/domains`, { name });
  if (verify) {
    const v = await admin<{ verified: boolean }>(stack, 'POST', `/domains/${res.body.id}/verify`, { force: true });
    expect(v.body.verified).toBe(true);
  }
  return res.body.id;
}

export async function createKey(
  stack: Stack,
  accountId: string,
  permission: 'read_only' | 'send_only' | 'all' = 'all',
  allowedDomains?: string[],
): Promise<{ id: string; key: string }> {
  const res = await admin<{ id: string; key: string }>(stack, 'POST', `/accounts/${accountId}/api-keys`, {
    name: `${permission} key`,
    permission,
    ...(allowedDomains ? { allowed_domains: allowedDomains } : {}),
  });
  return { id: res.body.id, key: res.body.key };
}

/** A new account with one verified sender domain and a key with permission `all`. */
export async function createSender(
  stack: Stack,
  name: string,
  domain: string,
): Promise<{ accountId: string; domainId: string; key: string; keyId: string }> {
  const accountId = await createAccount(stack, name);
  const domainId = await addDomain(stack, accountId, domain);
  const { id: keyId, key } = await createKey(stack, accountId, 'all');
  return { accountId, domainId, key, keyId };
}
