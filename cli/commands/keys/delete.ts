import { adminCommand, idArg } from '../../lib/define-command.js';

export default adminCommand({
  summary: 'Delete an API key: it fails with 401 from the next request on.',
  description: 'To rotate a key: create the new one, move your applications to it, then delete the old one.',
  examples: ['key_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('API key id (key_...).') },
  call: (api, { args }) => api.deleteApiKey({ id: args.id }),
  show: (res, { args }) => res.message || `Deleted ${args.id}`,
});
