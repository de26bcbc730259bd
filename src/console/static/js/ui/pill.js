/** Status pills: one colour per meaning, so the same word looks the same on every page. */
import { h } from '../dom.js';

const TONES = {
  // pass, fail, softfail, temperror, permerror: an inbound message's SPF, DKIM and DMARC results.
  good: ['active', 'healthy', 'delivered', 'completed', 'succeeded', 'verified', 'pass', 'ok'],
  info: ['sent', 'processing', 'enqueued', 'scheduled', 'send', 'delivery', 'open', 'click', 'inbound', 'reply'],
  // throttled, sources suspended: an egress site sent to more slowly, or from fewer addresses; suspended: not at all.
  warn: [
    'review',
    'paused',
    'discarded',
    'complained',
    'complaint',
    'unverified',
    'softfail',
    'temperror',
    'throttled',
    'sources suspended',
  ],
  bad: ['disabled', 'banned', 'bounced', 'failed', 'bounce', 'reject', 'fail', 'permerror', 'suspended'],
  muted: ['pending', 'cancelled'],
};
const TONE_OF = new Map(Object.entries(TONES).flatMap(([tone, words]) => words.map((w) => [w, tone])));

/** `text` defaults to the status itself. */
export function pill(status, text = status) {
  return h('span', { class: `pill ${TONE_OF.get(status) ?? 'muted'}` }, text);
}
