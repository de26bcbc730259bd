/** How numbers, rates and times read in the console. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const number = new Intl.NumberFormat();

/** An ISO timestamp in the operator's locale and time zone; empty input reads as a dash. */
export function formatTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function formatNumber(n) {
  return n === undefined || n === null ? '—' : number.format(n);
}

/** A rate from 0 to 1 as a percentage; small rates keep two decimals (a 0.08 % complaint rate matters). */
export function formatRate(rate) {
  if (rate === undefined || rate === null) return '—';
  return `${(rate * 100).toFixed(2)} %`;
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A list of addresses on one line. */
export function formatAddresses(list) {
  return list && list.length ? list.join(', ') : '—';
}
