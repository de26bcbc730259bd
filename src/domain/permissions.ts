import { AppError } from '../errors.js';
import type { AccountStatus, Permission } from './catalog.js';

/**
 * What each key permission allows (spec, Authentication 4). Cancelling a scheduled email is neither
 * sending nor querying, so it needs `all`.
 */
export type Operation = 'read' | 'send' | 'cancel';

const ALLOWED: Record<Permission, readonly Operation[]> = {
  read_only: ['read'],
  send_only: ['read', 'send'],
  all: ['read', 'send', 'cancel'],
};

const VERB: Record<Operation, string> = { read: 'read emails', send: 'send emails', cancel: 'cancel scheduled emails' };

export function assertAllowed(permission: Permission, accountStatus: AccountStatus, op: Operation): void {
  if (!ALLOWED[permission].includes(op)) {
    throw new AppError('permission_denied', `This API key (${permission}) does not have permission to ${VERB[op]}`);
  }
  if (accountStatus === 'paused' && op !== 'read') {
    throw new AppError('permission_denied', 'This account is paused: sending is suspended');
  }
}

/** A key with allowed_domains may send only from those domains. */
export function assertSenderDomainAllowed(allowedDomains: readonly string[], domain: string): void {
  if (allowedDomains.length > 0 && !allowedDomains.includes(domain)) {
    throw new AppError('permission_denied', `This API key does not have permission to send from the domain ${domain}`);
  }
}
