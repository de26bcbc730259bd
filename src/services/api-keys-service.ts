import type { AccountsRepo } from '../db/index.js';
import type { ApiKeyRow } from '../domain/entities/api-keys.js';
import type { ApiKeysRepo } from '../db/index.js';
import { isOneOf, PERMISSIONS } from '../domain/catalog.js';
import { asciiDomain } from '../domain/domain-name.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { UsageRecorder } from './usage-recorder.js';
import { generateApiKey } from './secrets.js';

export const NAME_MAX = 200;
export const DOMAIN = /^[a-z0-9.-]{1,253}$/;
// Longer than any domain can be written, even in Unicode with every character escaped in the answer.
const DOMAIN_MAX_INPUT = 1024;

export function createApiKeysService(deps: {
  apiKeys: ApiKeysRepo;
  accounts: Pick<AccountsRepo, 'get'>;
  usage: Pick<UsageRecorder, 'flush'>;
}) {
  return {
    /** Creates a key; the answer is the only place the key ever appears. */
    async create(
      accountId: string,
      input: { name: string; permission: string; allowedDomains: string[] },
    ): Promise<ApiKeyRow & { key: string }> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      const name = input.name.trim();
      if (name === '') throw invalid('name is required');
      if (name.length > NAME_MAX)
        throw invalid(`name: length ${name.length} exceeds the maximum of ${NAME_MAX} characters`);
      if (!isOneOf(PERMISSIONS, input.permission)) {
        throw invalid(`permission must be one of ${PERMISSIONS.join(', ')}; got "${input.permission}"`);
      }
      // In the one form sender domains are matched in (ASCII, lower case), so `bücher.de` allows `zoe@bücher.de`.
      // The ASCII pattern the OpenAPI document states is still taken as it was (lower-cased).
      const allowedDomains = input.allowedDomains.map((d, i) => {
        const written = d.trim().toLowerCase();
        const ascii = DOMAIN.test(written) ? written : d.length <= DOMAIN_MAX_INPUT ? asciiDomain(d) : undefined;
        if (ascii === undefined)
          throw invalid(
            `allowed_domains[${i}]: ${JSON.stringify(d.length > 80 ? `${d.slice(0, 80)}…` : d)} is not a domain name`,
          );
        return ascii;
      });
      const { key, hash, prefix } = generateApiKey();
      const row = await deps.apiKeys.create({
        id: newId('apiKey'),
        accountId,
        name,
        permission: input.permission,
        allowedDomains,
        keyHash: hash,
        keyPrefix: prefix,
      });
      return { ...row, key };
    },

    async list(accountId: string): Promise<ApiKeyRow[]> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      await deps.usage.flush();
      return deps.apiKeys.listByAccount(accountId);
    },

    /** The key fails with 401 from the next request on: every request reads its key afresh. */
    async delete(id: string): Promise<void> {
      if (!(await deps.apiKeys.softDelete(id))) throw notFound('API key', id);
    },
  };
}
export type ApiKeysService = ReturnType<typeof createApiKeysService>;
