import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showErasure } from '../../lib/show-erasure.js';

export default adminCommand({
  summary: "Erase one email's content (GDPR): subject, html, text, headers, tags and attachments (admin token).",
  description:
    'The email keeps its id, addresses, status and timestamps; `emails get` then shows it with an empty subject and bodies and no attachments. ' +
    'Its copy in the built-in catcher, if any, is deleted. An email still being delivered (pending) is refused (409 conflict). ' +
    'To erase an address everywhere, use `recipients erase`.',
  ...idOf('Email', 'em'),
  call: (api, { args }) => api.eraseEmail({ id: args.id }),
  show: (res, { args }) => showErasure(res, `the content of ${args.id}`),
});
