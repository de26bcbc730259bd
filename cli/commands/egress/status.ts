import { adminCommand } from '../../lib/define-command.js';
import { showEgressStatus } from '../../lib/egress-show.js';

export default adminCommand({
  summary: "Egress shaping: each destination site's state, rate, connections and last reply; the pools' warm-up use.",
  description:
    'Direct delivery only (docs/deliverability.md "Egress shaping"). A site is suspended (nothing sent to it), ' +
    'throttled (a lower rate) or has source addresses suspended until the time shown, as the automation rules ' +
    'decided; `egress resume <site>` ends it. The rules file is read as the workers read it: one that does not ' +
    'parse is reported (the workers keep the rules they had).',
  examples: ['', '--json'],
  call: (api) => api.getEgressStatus({}),
  show: showEgressStatus,
});
