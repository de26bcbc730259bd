import { Code, ConnectError } from '@connectrpc/connect';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { Handlers } from './call-context.js';
import type { Guard } from './guard.js';

type ApiKeyRpcs = 'createApiKey' | 'listApiKeys' | 'deleteApiKey';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the keys service (issue 27)
export interface ApiKeysApiDeps {}

const notYet = (): never => {
  throw new ConnectError('API keys over the public API are not built yet', Code.Unimplemented);
};

/** The account's API keys, managed with a key of permission `all` (CONTRACT.md "Self-service"). */
export function createApiKeysApi(
  _deps: ApiKeysApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, ApiKeyRpcs> {
  return { createApiKey: notYet, listApiKeys: notYet, deleteApiKey: notYet };
}
