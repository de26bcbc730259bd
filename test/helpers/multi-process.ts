import fs from 'node:fs/promises';
import postgres from 'postgres';
import { expect } from 'vitest';
import { call } from './http.js';
import { freePort } from './ports.js';
import { createDeployment, spawnService, waitReady, type Child } from './service-process.js';
import { ADMIN_TOKEN } from './stack.js';

/**
 * One deployment run as several processes, as in production: `apis` API processes (each its own REST and gRPC
 * port) and `workers` worker processes, against one database, one Temporal task queue and one sink.
 */
export async function startMultiProcess(
  name: string,
  counts: { apis: number; workers: number },
  extra: Record<string, string>,
) {
  const d = await createDeployment(name, extra);
  const apiUrls: string[] = [];
  const apis: Child[] = [];
  // The first one migrates and seeds the fresh database; the others then start at once.
  for (let i = 0; i < counts.apis; i++) {
    const env =
      i === 0 ? d.env('api') : { ...d.env('api'), PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
    apis.push(spawnService(`api-${i + 1}`, env));
    apiUrls.push(`http://127.0.0.1:${env.PORT}`);
    if (i === 0) await waitReady(apiUrls[0]!, apis[0]!);
  }
  const workers = Array.from({ length: counts.workers }, (_, i) => spawnService(`worker-${i + 1}`, d.env('worker')));
  await Promise.all(apis.slice(1).map((c, i) => waitReady(apiUrls[i + 1]!, c)));
  return { d, apis, workers, api: apiUrls.map((u) => `${u}/v1/mail`) };
}

/** Reads the deployment's database directly, without going through (and being counted by) the API. */
export async function query<T extends object>(
  databaseUrl: string,
  run: (sql: postgres.Sql) => Promise<T[]>,
): Promise<T[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return await run(sql);
  } finally {
    await sql.end();
  }
}

export interface AccountKey {
  accountId: string;
  keyId: string;
  key: string;
}

/** A new key (permission all) of the default account. */
export async function newKey(admin: string, name: string): Promise<AccountKey> {
  const accounts = await call<{ accounts: { id: string; name: string }[] }>('GET', `${admin}/accounts`, {
    token: ADMIN_TOKEN,
  });
  const accountId = accounts.body.accounts.find((a) => a.name === 'default')!.id;
  const res = await call<{ id: string; key: string }>('POST', `${admin}/accounts/${accountId}/api-keys`, {
    token: ADMIN_TOKEN,
    body: { name, permission: 'all' },
  });
  expect(res.status, res.text).toBe(200);
  return { accountId, keyId: res.body.id, key: res.body.key };
}

/** A key's usage statistics as the management API reports them. */
export async function keyUsage(
  admin: string,
  k: AccountKey,
): Promise<{ request_count: number; email_sent_count: number }> {
  const res = await call<{ api_keys: { id: string; usage: { request_count: number; email_sent_count: number } }[] }>(
    'GET',
    `${admin}/accounts/${k.accountId}/api-keys`,
    { token: ADMIN_TOKEN },
  );
  return res.body.api_keys.find((x) => x.id === k.keyId)!.usage;
}

/**
 * Which of `children` owns the local end of a TCP connection on `port` (the SMTP client side of a message
 * the sink holds): Linux's /proc maps the port to a socket inode, and each process's fds to inodes.
 */
export async function ownerOfPort(port: number, children: Child[]): Promise<Child | undefined> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((f) => fs.readFile(f, 'utf8').catch(() => '')),
  );
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set(
    tables
      .join('\n')
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(`:${hex}`))
      .map((f) => f[9]),
  );
  for (const c of children) {
    const fds = await fs.readdir(`/proc/${c.proc.pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await fs.readlink(`/proc/${c.proc.pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) return c;
    }
  }
  return undefined;
}
