import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { ApiKeysService } from '../services/api-keys-service.js';
import { presentApiKey } from './admin-presenters.js';
import type { Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';

type ApiKeyRpcs = 'createApiKey' | 'listApiKeys' | 'deleteApiKey';

export interface ApiKeysApiDeps {
  apiKeys: ApiKeysService;
}

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
        const k = await deps.apiKeys.create(accountId, {
          name: req.name,
          permission: req.permission,
          allowedDomains: req.allowedDomains,
          rateLimit: req.rateLimit,
          dailyQuota: req.dailyQuota,
          expiresAt: req.expiresAt,
        });
        return presentApiKey(k, { key: k.key });
      }),
    listApiKeys: (req, ctx) =>
      read(ctx, async (accountId) => {
        const { rows, total } = await deps.apiKeys.list(accountId, req);
        return { apiKeys: rows.map((k) => presentApiKey(k, { withUsage: true })), total };
      }),
    deleteApiKey: (req, ctx) =>
      manage(ctx, async (accountId) => {
        await deps.apiKeys.delete(req.id, accountId);
        return { success: true, message: `API key ${req.id} deleted` };
      }),
  };
}
