import { adminCommand, idArg } from '../../lib/define-command.js';

export default adminCommand({
  summary: 'Send an event to its webhook again, with a fresh retry budget (e.g. one that was discarded).',
  examples: ['whd_01JZ8Q4V6T3N2K5M7P9R0S1T2U01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Webhook delivery id (whd_..., the X-Mail-Delivery-Id).') },
  call: (api, { args }) => api.resendWebhookDelivery({ id: args.id }),
  show: (res) => `Queued ${res.id} (${res.eventType} of ${res.emailId}) again`,
});
