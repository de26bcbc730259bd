/** Status pills: one colour per meaning, so the same word looks the same on every page. */
import { h } from '../dom.js';

const TONES = {
  good: ['active', 'healthy', 'delivered', 'completed', 'succeeded', 'verified'],
  info: ['sent', 'processing', 'enqueued', 'scheduled', 'send', 'delivery', 'open', 'click'],
  warn: ['review', 'paused', 'discarded', 'complained', 'complaint', 'unverified'],
  bad: ['disabled', 'banned', 'bounced', 'failed', 'bounce', 'reject'],
  muted: ['pending', 'cancelled'],
};
const TONE_OF = new Map(Object.entries(TONES).flatMap(([tone, words]) => words.map((w) => [w, tone])));

/** `text` defaults to the status itself. */
export function pill(status, text = status) {
  return h('span', { class: `pill ${TONE_OF.get(status) ?? 'muted'}` }, text);
}
