/**
 * Sender domains: the DNS records to publish with each one's status from the last DNS check, the DMARC policy
 * that check found, verification (or the operator's override), DKIM key rotation, and tracking.
 */
import { createDomain, listDomains, rotateDomainDkim, updateDomain, verifyDomain } from '../../api.js';
import { h, replaceChildren, uniqueId } from '../../dom.js';
import { formatTime } from '../../format.js';
import { announce, announceError } from '../../ui/announce.js';
import { dmarcStatus } from '../../ui/compliance.js';
import { copyField } from '../../ui/copy.js';
import { confirmAction } from '../../ui/dialog.js';
import { field, onSubmit } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable } from '../../ui/table.js';
import { session } from '../../session.js';

/**
 * A record's value to copy. A TXT value over 255 characters (a DKIM key's) is also offered as the API's zone_value,
 * quoted 255-character strings, the form zone files and most DNS providers' forms take: one DNS character string
 * holds 255 at most, and some providers refuse or cut a longer one.
 */
function recordValue(r, i) {
  const value = copyField({ id: uniqueId('dns'), label: `${r.type} record ${i + 1} value`, value: r.value });
  if (r.type !== 'TXT' || r.value.length <= 255) return value;
  return h(
    'div',
    { class: 'zone-value' },
    value,
    h(
      'span',
      { class: 'hint' },
      'Over 255 characters: as quoted 255-character strings for zone files and DNS providers that ask for them',
    ),
    copyField({
      id: uniqueId('dns'),
      label: `${r.type} record ${i + 1} value as quoted 255-character strings`,
      value: r.zone_value,
    }),
  );
}

export async function render({ account }) {
  const list = h('div', { class: 'stack' });

  async function load() {
    const { domains } = await listDomains(account.id);
    replaceChildren(
      list,
      domains.length ? domains.map((d) => domainCard(d, load)) : h('p', { class: 'empty' }, 'No domains yet.'),
    );
  }

  const name = h('input', {
    name: 'name',
    required: true,
    placeholder: 'mail.example.com',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const form = onSubmit(
    h(
      'form',
      { class: 'inline-form' },
      field('Domain name', name),
      h('button', { type: 'submit', class: 'button primary' }, 'Add domain'),
    ),
    async () => {
      try {
        const domain = await createDomain(account.id, name.value.trim());
        name.value = '';
        announce(`Domain ${domain.name} added: publish its DNS records, then verify it.`);
        await load();
      } catch (err) {
        announceError(err);
      }
    },
  );

  await load();
  return h('div', { class: 'stack' }, section('Add a sender domain', form), list);
}

const PURPOSES = {
  ownership: 'Ownership',
  spf: 'SPF',
  dkim: 'DKIM',
  return_path: 'Return path',
  return_path_spf: 'Return path SPF',
  dmarc: 'DMARC (recommended)',
  inbound: 'Inbound MX (receives mail for its routes)',
};

function domainCard(domain, reload) {
  const verify = async (force) => {
    if (
      force &&
      !(await confirmAction({
        title: `Mark ${domain.name} verified?`,
        message: 'The DNS records will not be checked. Use this only for a domain you know the account controls.',
        confirmLabel: 'Mark verified',
      }))
    )
      return;
    try {
      const d = await verifyDomain(domain.id, force);
      announce(
        d.verified
          ? `${d.name} is verified.`
          : `${d.name} is not verified yet: its ownership, SPF and DKIM records must all be found.`,
        d.verified ? 'info' : 'error',
      );
      await reload();
    } catch (err) {
      announceError(err);
    }
  };

  const rotate = async () => {
    if (
      !(await confirmAction({
        title: `Rotate the DKIM key of ${domain.name}?`,
        message:
          'A new key is made with a new selector. Publish its record; it signs once a check finds it, and the current key signs until then.',
        confirmLabel: 'Rotate key',
      }))
    )
      return;
    try {
      await rotateDomainDkim(domain.id);
      announce(`A new DKIM key for ${domain.name}: publish its record, then verify.`);
      await reload();
    } catch (err) {
      announceError(err);
    }
  };

  const toggle = (label, key) => {
    const input = h('input', { type: 'checkbox', role: 'switch', id: uniqueId(key), checked: domain[key] });
    input.addEventListener('change', async () => {
      try {
        const d = await updateDomain(domain.id, { [key]: input.checked });
        announce(`${label} ${d[key] ? 'on' : 'off'} for ${d.name}.`);
      } catch (err) {
        input.checked = !input.checked;
        announceError(err);
      }
    });
    return h('div', { class: 'switch' }, input, h('label', { for: input.id }, label));
  };

  return h(
    'section',
    { class: 'card', 'aria-label': `Domain ${domain.name}`, 'data-domain': domain.name },
    h(
      'div',
      { class: 'card-head' },
      h(
        'h2',
        { class: 'card-title' },
        domain.name,
        ' ',
        pill(domain.verified ? 'verified' : 'unverified'),
        // Records that checked out once and no longer do: the domain still sends, but receivers may refuse it.
        domain.dns_failing_since
          ? [
              ' ',
              h(
                'span',
                { class: 'failing-badge', title: `Since ${formatTime(domain.dns_failing_since)}` },
                pill('failed', 'DNS failing'),
              ),
            ]
          : null,
      ),
      h(
        'span',
        { class: 'sub' },
        `Added ${formatTime(domain.created_at)} · ${domain.dns_checked_at ? `DNS checked ${formatTime(domain.dns_checked_at)}` : 'DNS not checked yet'}`,
      ),
    ),
    h('p', { class: 'dmarc-line' }, dmarcStatus(domain.dmarc)),
    dataTable({
      caption: `DNS records for ${domain.name}`,
      showCaption: false,
      empty: 'No DNS records.',
      columns: [{ label: 'Purpose' }, { label: 'Status' }, { label: 'Type' }, { label: 'Name' }, { label: 'Value' }],
      rows: domain.dns_records.map((r, i) => [
        PURPOSES[r.purpose] ?? r.purpose,
        pill(r.status),
        r.type,
        h('code', {}, r.name),
        recordValue(r, i),
      ]),
    }),
    h(
      'div',
      { class: 'card-actions' },
      domain.verified
        ? null
        : h('button', { type: 'button', class: 'button primary', onclick: () => verify(false) }, 'Verify'),
      // Marking a domain verified without its records is the operator's override alone.
      domain.verified || !session.isOperator()
        ? null
        : h('button', { type: 'button', class: 'button secondary', onclick: () => verify(true) }, 'Force verify'),
      domain.verified
        ? h('button', { type: 'button', class: 'button secondary', onclick: () => verify(false) }, 'Check DNS records')
        : null,
      h('button', { type: 'button', class: 'button secondary', onclick: rotate }, 'Rotate DKIM key'),
      h(
        'fieldset',
        { class: 'switches' },
        h('legend', { class: 'visually-hidden' }, `Tracking for ${domain.name}`),
        toggle('Open tracking', 'open_tracking'),
        toggle('Click tracking', 'click_tracking'),
      ),
    ),
  );
}
