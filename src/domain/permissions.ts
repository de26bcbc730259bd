import { AppError } from '../errors.js';
import type { AccountStatus, Permission } from './catalog.js';

/**
 * What each key permission allows (spec, Authentication 4). Cancelling a scheduled email is neither
 * sending nor querying, so it needs `all`; so does changing templates, which every later send renders
 * (CONTRACT.md "Templates"). Reading templates is reading. The suppression list is read by `all` and
 * `read_only` keys, not `send_only` ones (CONTRACT.md: reads need all or read_only), and changed by `all` keys.
 * Inbound mail likewise: its routes are changed by `all` keys, the mail they received read by `all` and
 * `read_only` keys (mail sent to the account is not what a sending key needs to see).
 * Self-service (CONTRACT.md): any key may read its own account; its domains, keys, webhooks and stats are read by
 * `all` and `read_only` keys and changed by `all` keys only (a key that can make keys can make itself any key).
 */
export type Operation =
  | 'read'
  | 'send'
  | 'cancel'
  | 'manage_templates'
  | 'read_suppressions'
  | 'manage_suppressions'
  | 'read_inbound'
  | 'manage_inbound'
  | 'read_account'
  | 'read_settings'
  | 'manage_settings'
  | 'read_stats';

const ALLOWED: Record<Permission, readonly Operation[]> = {
  read_only: ['read', 'read_suppressions', 'read_inbound', 'read_account', 'read_settings', 'read_stats'],
  send_only: ['read', 'send', 'read_account'],
  all: [
    'read',
    'send',
    'cancel',
    'manage_templates',
    'read_suppressions',
    'manage_suppressions',
    'read_inbound',
    'manage_inbound',
    'read_account',
    'read_settings',
    'manage_settings',
    'read_stats',
  ],
};

const VERB: Record<Operation, string> = {
  read: 'read emails',
  send: 'send emails',
  cancel: 'cancel scheduled emails',
  manage_templates: 'change templates',
  read_suppressions: 'read the suppression list',
  manage_suppressions: 'change the suppression list',
  read_inbound: 'read inbound mail',
  manage_inbound: 'change inbound routes',
  read_account: 'read the account',
  read_settings: "read the account's domains, API keys and webhooks",
  manage_settings: "change the account's domains, API keys and webhooks",
  read_stats: "read the account's stats",
};

/** Whether a key of `permission` may do `op` at all (the account's status aside). */
export const permits = (permission: Permission, op: Operation): boolean => ALLOWED[permission].includes(op);

export function assertAllowed(permission: Permission, accountStatus: AccountStatus, op: Operation): void {
  if (!ALLOWED[permission].includes(op)) {
    throw new AppError('permission_denied', `This API key (${permission}) does not have permission to ${VERB[op]}`);
  }
  // A paused account may still read, prepare its templates and tend its suppressions; what it may not do is send.
  if (accountStatus === 'paused' && (op === 'send' || op === 'cancel')) {
    throw new AppError('permission_denied', 'This account is paused: sending is suspended');
  }
}

/** A key with allowed_domains may send only from those domains. */
export function assertSenderDomainAllowed(allowedDomains: readonly string[], domain: string): void {
  if (allowedDomains.length > 0 && !allowedDomains.includes(domain)) {
    throw new AppError('permission_denied', `This API key does not have permission to send from the domain ${domain}`);
  }
}
