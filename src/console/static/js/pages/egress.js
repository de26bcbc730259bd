/**
 * Egress shaping of direct delivery (docs/deliverability.md "Egress shaping"), the operator's alone: every
 * destination site with its state (a suspended or throttled site stands out, with until when), rate, connections
 * and last replies, a Resume button for each site held; then the source-address pools with today's warm-up use.
 * The rules file read is named, and its error shown when it is refused (the workers keep the rules they had).
 */
import { getEgressStatus, resumeEgressSite } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { formatNumber, formatTime } from '../format.js';
import { announce, announceError } from '../ui/announce.js';
import { confirmAction } from '../ui/dialog.js';
import { pageHeader, section } from '../ui/page.js';
import { pill } from '../ui/pill.js';
import { dataTable } from '../ui/table.js';

/** suspended, throttled, sources suspended or ok: the API answers only the times still ahead. */
function stateOf(site) {
  if (site.suspended_until) return { state: 'suspended', until: site.suspended_until };
  if (site.throttled_until) return { state: 'throttled', until: site.throttled_until };
  if (site.suspended_sources.length > 0)
    return {
      state: 'sources suspended',
      until: site.suspended_sources
        .map((s) => s.until)
        .sort()
        .at(-1),
    };
  return { state: 'ok', until: '' };
}

/** The rate in force, and the configured one when a throttle lowers it. */
function rateCell(site) {
  const current = site.current_rate || 'none';
  if (site.current_rate === site.rate) return current;
  return h('span', {}, h('strong', {}, current), ` (configured ${site.rate || 'none'})`);
}

function repliesCell(replies) {
  if (replies.length === 0) return '—';
  return h(
    'ul',
    { class: 'sample-replies' },
    replies
      .slice(0, 3)
      .map((r) =>
        h(
          'li',
          {},
          h('code', {}, r.text.startsWith(String(r.code)) ? r.text : `${r.code} ${r.text}`),
          r.action ? ` → ${r.action}` : null,
          r.source ? ` (from ${r.source})` : null,
          h('span', { class: 'sub' }, formatTime(r.at)),
        ),
      ),
  );
}

function stateCell(site) {
  const { state, until } = stateOf(site);
  return h(
    'span',
    { 'data-state': state },
    pill(state),
    until ? h('span', { class: 'sub' }, `until ${formatTime(until)}`) : null,
    site.suspended_sources.map((s) => h('span', { class: 'sub' }, `${s.address} until ${formatTime(s.until)}`)),
  );
}

export async function render() {
  const body = h('div', { class: 'stack egress' });

  async function load() {
    const status = await getEgressStatus();
    const held = status.sites.filter((s) => stateOf(s).state !== 'ok');
    replaceChildren(
      body,
      section(
        'Rules',
        h('p', {}, 'Read from ', h('code', {}, status.rules.path), '.'),
        status.rules.error
          ? h(
              'p',
              { class: 'callout warning', role: 'alert' },
              'The rules file is refused (the workers keep the rules they had): ',
              h('code', {}, status.rules.error),
            )
          : null,
      ),
      section(
        'Sites',
        h(
          'p',
          { class: 'list-count', role: 'status' },
          held.length === 0
            ? `${formatNumber(status.sites.length)} sites, none held.`
            : `${formatNumber(held.length)} of ${formatNumber(status.sites.length)} sites held: ${held.map((s) => `${s.site} ${stateOf(s).state}`).join(', ')}.`,
        ),
        dataTable({
          caption: 'Destination sites',
          empty: 'No sites: the rules file names none and no worker has sent yet.',
          columns: [
            { label: 'Site' },
            { label: 'State' },
            { label: 'Rate' },
            { label: 'Connections', numeric: true },
            { label: 'Attempts (1 min)', numeric: true },
            { label: 'Last replies' },
            { label: h('span', { class: 'visually-hidden' }, 'Actions') },
          ],
          rows: status.sites.map((site) => [
            h('span', {}, site.site, site.mx.length ? h('span', { class: 'sub' }, site.mx.join(', ')) : null),
            stateCell(site),
            rateCell(site),
            `${formatNumber(site.connections)} / ${formatNumber(site.connection_limit)}`,
            formatNumber(site.attempts_last_minute),
            repliesCell(site.last_replies),
            stateOf(site).state === 'ok'
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'button secondary small',
                    'aria-label': `Resume ${site.site}`,
                    onclick: () => resume(site),
                  },
                  'Resume',
                ),
          ]),
        }),
      ),
      section(
        'Source-address pools',
        dataTable({
          caption: 'Source addresses by pool, with their warm-up use today (UTC)',
          empty: 'No pools: mail leaves from the default address.',
          columns: [
            { label: 'Pool' },
            { label: 'Address' },
            { label: 'EHLO name' },
            { label: 'Used for' },
            { label: 'Warm-up today', numeric: true },
          ],
          rows: status.pools.flatMap((pool) =>
            pool.sources.map((s) => [
              pool.name,
              h('code', {}, s.address),
              s.ehlo,
              [...pool.streams, ...pool.accounts].join(', ') || '—',
              s.warmup_limit_today < 0
                ? `${formatNumber(s.sent_today)} (no limit)`
                : `${formatNumber(s.sent_today)} of ${formatNumber(s.warmup_limit_today)}`,
            ]),
          ),
        }),
      ),
    );
  }

  async function resume(site) {
    const { state } = stateOf(site);
    const confirmed = await confirmAction({
      title: `Resume ${site.site}?`,
      message: `The site is ${state}, as a rule decided from its replies. Every worker sends to it again at its configured rate within seconds; if it answers the same way, it is held again.`,
      confirmLabel: 'Resume',
    });
    if (!confirmed) return;
    try {
      await resumeEgressSite(site.site);
      announce(`${site.site} resumed.`);
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  const refresh = h(
    'button',
    {
      type: 'button',
      class: 'button secondary',
      onclick: () => load().then(() => announce('Egress state refreshed.'), announceError),
    },
    'Refresh',
  );
  await load();
  return h('div', { class: 'page' }, pageHeader('Egress', { actions: refresh }), body);
}
