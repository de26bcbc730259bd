import fs from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_TOKEN_MIN_LENGTH } from '../config.js';
import type { createSeedRepo } from '../db/index.js';
import { DAILY_QUOTA } from '../domain/limits.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-dir.js';
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
export async function seedIfEmpty(
  repo: ReturnType<typeof createSeedRepo>,
  domain: string,
): Promise<FirstRun | undefined> {
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

/** The data dir's file that holds the first run's account and API key until a banner has shown them. */
export const FIRST_RUN_FILE = 'first-run.json';

/**
 * Keeps the first run's key (owner-only) in the data dir. Called in the transaction that creates the key,
 * before it commits: a key that exists is never only in the memory of a process that may stop before its
 * banner shows it (the next start shows it: pendingFirstRun). Answers the file. A data dir it cannot write costs only that
 * safety net, not the start. The key goes to no log line: logs are shipped and kept where secrets should not be.
 */
export async function keepFirstRun(dataDir: string, firstRun: FirstRun, logger: Logger): Promise<string | undefined> {
  const file = path.join(dataDir, FIRST_RUN_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await makePrivateDir(dataDir);
    // Whole or not at all, over one left by a first run whose transaction did not commit.
    await fs.writeFile(temporary, `${JSON.stringify(firstRun)}\n`, { mode: PRIVATE_FILE_MODE });
    await fs.rename(temporary, file);
    return file;
  } catch (err) {
    await fs.rm(temporary, { force: true }).catch(() => {});
    logger.warn({ err, dataDir }, 'could not keep the first API key in the data dir: only the banner will show it');
    return undefined;
  }
}

/**
 * The first run's key that a process stopped before showing, if one did (kept by keepFirstRun). A file not
 * as written is left for its owner to read, with a warning, rather than stop the start.
 */
export async function pendingFirstRun(dataDir: string, logger: Logger): Promise<FirstRun | undefined> {
  const file = path.join(dataDir, FIRST_RUN_FILE);
  let kept: unknown;
  try {
    kept = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    kept = undefined;
  }
  if (
    typeof kept === 'object' &&
    kept !== null &&
    'accountId' in kept &&
    'domain' in kept &&
    'apiKey' in kept &&
    typeof kept.accountId === 'string' &&
    typeof kept.domain === 'string' &&
    typeof kept.apiKey === 'string'
  )
    return { accountId: kept.accountId, domain: kept.domain, apiKey: kept.apiKey };
  logger.warn({ file }, 'the kept first API key is not as the first start wrote it: read the file, then delete it');
  return undefined;
}

/** Once a banner has shown the first run's key: it is no longer kept in clear anywhere. */
export async function forgetFirstRun(dataDir: string): Promise<void> {
  await fs.rm(path.join(dataDir, FIRST_RUN_FILE), { force: true });
}

/**
 * The admin token: MAILER_ADMIN_TOKEN when set; else the one kept in the data dir, made on first start
 * (created: true, to be printed once). The file is readable by its owner only. A token put in that file by
 * hand must be as long as a configured one.
 */
export async function loadAdminToken(
  configured: string | undefined,
  dataDir: string,
): Promise<{ token: string; created: boolean }> {
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
    throw new Error(
      `The admin token in ${file} is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters: delete the file to have a new one generated`,
    );
  }
  return token;
}
