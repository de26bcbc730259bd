import fs from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_TOKEN_MIN_LENGTH } from '../config.js';
import type { createSeedRepo } from '../db/index.js';
import { DAILY_QUOTA } from '../domain/limits.js';
import { newId } from '../ids.js';
import { makePrivateDir } from '../private-dir.js';
import { generateApiKey, generateToken } from './secrets.js';

export interface FirstRun {
  accountId: string;
  domain: string;
  apiKey: string;
}

/**
 * On a database with no account: a default account with a verified sender domain (so the quota is the
 * verified 1,000) and an API key with permission `all`, returned once to be printed once.
 */
export async function seedIfEmpty(repo: ReturnType<typeof createSeedRepo>, domain: string): Promise<FirstRun | undefined> {
  if (!(await repo.isEmpty())) return undefined;
  const { key, hash, prefix } = generateApiKey();
  const accountId = newId('account');
  await repo.seed({
    account: { id: accountId, name: 'default', dailyQuota: DAILY_QUOTA.verifiedAccount },
    domain: { id: newId('domain'), name: domain, verificationToken: generateToken(16) },
    key: { id: newId('apiKey'), name: 'default', keyHash: hash, keyPrefix: prefix },
  });
  return { accountId, domain, apiKey: key };
}

/**
 * The admin token: MAILER_ADMIN_TOKEN when set; else the one kept in the data dir, made on first start
 * (created: true, to be printed once). The file is readable by its owner only. A token put in that file by
 * hand must be as long as a configured one.
 */
export async function loadAdminToken(configured: string | undefined, dataDir: string): Promise<{ token: string; created: boolean }> {
  if (configured) return { token: configured, created: false };
  const file = path.join(dataDir, 'admin-token');
  try {
    const token = (await fs.readFile(file, 'utf8')).trim();
    if (token !== '') return { token: checkedLength(token, file), created: false };
  } catch (err) {
    // Not made yet.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await makePrivateDir(dataDir);
  const token = `adm_${generateToken(32)}`;
  try {
    await fs.writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return { token, created: true };
  } catch {
    // Another process made it first: use theirs.
    return { token: (await fs.readFile(file, 'utf8')).trim(), created: false };
  }
}

function checkedLength(token: string, file: string): string {
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
    throw new Error(`The admin token in ${file} is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters: delete the file to have a new one generated`);
  }
  return token;
}
