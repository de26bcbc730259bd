import { Flags } from '@oclif/core';
import { accountFlag } from '../../lib/base-command.js';
import { sampleId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { list, pageLine, percent, table } from '../../lib/format.js';

export default adminCommand({
  summary: "List an account's API keys with their limits and usage (never the keys themselves).",
  examples: [
    `--account ${sampleId('acc')}`,
    `-a ${sampleId('acc')} --page 2 --page-size 50`,
    `-a ${sampleId('acc')} --json`,
  ],
  flags: {
    account: accountFlag,
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Keys per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) =>
    api.listApiKeys({ accountId: flags.account, page: flags.page, pageSize: flags['page-size'] }),
  show: (res, { flags }) =>
    `${table(
      [
        'ID',
        'NAME',
        'PERMISSION',
        'ALLOWED DOMAINS',
        'RATE/S',
        'DAILY QUOTA',
        'SENT TODAY',
        'EXPIRES',
        'REQUESTS',
        'SENT',
        'ERRORS',
        'LAST USED',
        'CREATED',
      ],
      res.apiKeys.map((k) => [
        k.id,
        k.name,
        k.permission,
        k.allowedDomains.length ? list(k.allowedDomains) : '(any)',
        k.rateLimit === undefined ? '(service)' : String(k.rateLimit),
        // A key's own count is kept only against a quota of its own.
        k.dailyQuota === undefined ? '(account)' : String(k.dailyQuota),
        k.dailyQuota === undefined ? '-' : String(k.usage?.sentToday ?? 0),
        k.expiresAt ?? 'never',
        String(k.usage?.requestCount ?? 0),
        String(k.usage?.emailSentCount ?? 0),
        percent(k.usage?.errorRate ?? 0),
        k.lastUsedAt ?? 'never',
        k.createdAt,
      ]),
    )}\n${pageLine(flags.page, flags['page-size'], res.total)}`,
});
