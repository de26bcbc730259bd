/** An inbound message's authentication results as three badges: SPF, DKIM and DMARC, each with its result. */
import { h } from '../dom.js';
import { pill } from './pill.js';

const CHECKS = [
  ['spf', 'SPF'],
  ['dkim', 'DKIM'],
  ['dmarc', 'DMARC'],
];

/** `authentication`: {spf, dkim, dmarc}, each pass, fail, softfail, neutral, none, temperror, permerror or policy. */
export function authBadges(authentication = {}) {
  return h(
    'span',
    { class: 'auth-badges' },
    CHECKS.map(([key, label]) => {
      const result = authentication[key] || 'none';
      const badge = pill(result, `${label} ${result}`);
      badge.dataset.check = key;
      return badge;
    }),
  );
}
