import { afterAll, afterEach, expect, onTestFailed } from 'vitest';
import { call } from './http.js';
import { childLogs, createDeployment, killAll } from './service-process.js';
import type { SmtpSink } from './smtp-sink.js';
import { ADMIN_TOKEN } from './stack.js';

/**
 * The deployments of a crash-test file (durability, jobs-durability): each a fresh database, task queue, data dir
 * and sink (createDeployment). The service processes are killed after each test and the sinks closed after the
 * file; a failing test prints the processes' logs.
 */
export function useCrashDeployments(name: string) {
  const sinks = new Set<SmtpSink>();
  afterEach(async () => {
    await killAll();
  });
  afterAll(async () => {
    await killAll();
    for (const s of sinks) {
      s.beforeAccept = async () => {};
      s.connected = () => {};
      await s.close();
    }
  });
  return async (extra: Record<string, string> = {}) => {
    onTestFailed(() => console.error(childLogs()));
    const d = await createDeployment(name, extra);
    sinks.add(d.sink);
    return d;
  };
}

/** A new key (permission all) of the default account that a deployment's first start created. */
export async function defaultAccountKey(baseUrl: string, name: string): Promise<string> {
  const accounts = await call<{ accounts: { id: string; name: string }[] }>(
    'GET',
    `${baseUrl}/v1/mail/admin/accounts`,
    { token: ADMIN_TOKEN },
  );
  expect(accounts.status).toBe(200);
  const account = accounts.body.accounts.find((a) => a.name === 'default');
  const key = await call('POST', `${baseUrl}/v1/mail/admin/accounts/${account!.id}/api-keys`, {
    token: ADMIN_TOKEN,
    body: { name, permission: 'all' },
  });
  expect(key.status).toBe(200);
  return key.body.key as string;
}
