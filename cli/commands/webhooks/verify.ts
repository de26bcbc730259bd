import { adminCommand, idArg } from '../../lib/define-command.js';

export default adminCommand({
  summary: 'Send the signed test request (X-Mail-Event: test) to a webhook and show what it answered.',
  examples: ['wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Webhook id (wh_...).') },
  call: (api, { args }) => api.verifyWebhook({ id: args.id }),
  show: (res) => (res.success ? `OK: the receiver answered HTTP ${res.statusCode}` : `Failed: ${res.statusCode === 0 ? 'no answer' : `HTTP ${res.statusCode}`}`),
  exitCode: (res) => (res.success ? 0 : 1),
});
