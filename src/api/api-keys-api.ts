import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { ApiKeyRow } from '../domain/entities/api-keys.js';
import type { ApiKeysService } from '../services/api-keys-service.js';
import { presentApiKey } from './admin-presenters.js';
import type { Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';

type ApiKeyRpcs = 'createApiKey' | 'listApiKeys' | 'deleteApiKey';

export interface ApiKeysApiDeps {
  apiKeys: ApiKeysService;
}

/** A new key as both APIs' create requests give it (the account comes from the caller or the path). */
export const apiKeyToCreate = (req: {
  name: string;
  permission: string;
  allowedDomains: string[];
  rateLimit?: number | undefined;
  dailyQuota?: number | undefined;
  expiresAt?: string | undefined;
}) => ({
  name: req.name,
  permission: req.permission,
  allowedDomains: req.allowedDomains,
  rateLimit: req.rateLimit,
  dailyQuota: req.dailyQuota,
  expiresAt: req.expiresAt,
});

/** A page of keys as both APIs answer it: `{api_keys, total}` with usage, never a key. */
export const listedApiKeys = ({ rows, total }: { rows: ApiKeyRow[]; total: number }) => ({
  apiKeys: rows.map((k) => presentApiKey(k, { withUsage: true })),
  total,
});

export const apiKeyDeleted = (id: string) => ({ success: true, message: `API key ${id} deleted` });

/**
 * The account's API keys, managed with a key of permission `all` and read with `all` or `read_only` (CONTRACT.md
 * "Self-service"): the management API's key calls with the caller's own account in place of the path's. Another
 * account's key is as absent as an unknown one (the delete's own statement asks for the caller's account).
 */
export function createApiKeysApi(
  deps: ApiKeysApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, ApiKeyRpcs> {
  const manage = permitting(deps.guard, 'manage_settings');
  const read = permitting(deps.guard, 'read_settings');
  return {
    createApiKey: (req, ctx) =>
      manage(ctx, async (accountId) => {
        const k = await deps.apiKeys.create(accountId, apiKeyToCreate(req));
        return presentApiKey(k, { key: k.key });
      }),
    listApiKeys: (req, ctx) => read(ctx, async (accountId) => listedApiKeys(await deps.apiKeys.list(accountId, req))),
    deleteApiKey: (req, ctx) =>
      manage(ctx, async (accountId) => {
        await deps.apiKeys.delete(req.id, accountId);
        return apiKeyDeleted(req.id);
      }),
  };
}
