/**
 * One template (or a new one, at .../templates/new): its fields, a live preview the service renders from the
 * unsaved content as the operator types (exactly as a send would), saving as a new version, its versions (view,
 * load into the editor, publish) and deletion.
 */
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  getTemplateVersion,
  previewTemplate,
  publishTemplate,
  updateTemplate,
} from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { field, onSubmit } from '../../ui/form.js';
import { mailFrame } from '../../ui/mail-preview.js';
import { fact, section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { confirmTemplateDeletion } from './templates.js';

/** Long enough that a typist's keystrokes make one request, short enough to feel live. */
const PREVIEW_DEBOUNCE_MS = 300;

const json = (value) => JSON.stringify(value, null, 2);

export async function render({ account, itemId, onCleanup }) {
  const isNew = itemId === 'new';
  /** The template as last stored (its latest version); null until a new one is saved. */
  let saved = isNew ? null : await getTemplate(account.id, itemId);
  const listPath = `/accounts/${account.id}/templates`;

  const textInput = (name, attrs = {}) =>
    h('input', { name, type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
  const textArea = (name, rows, attrs = {}) =>
    h('textarea', { name, rows, class: 'code-input', autocomplete: 'off', spellcheck: 'false', ...attrs });

  const name = textInput('name', { required: true });
  const alias = textInput('alias', { placeholder: 'welcome-email' });
  const subject = textInput('subject', { placeholder: 'Welcome, {{name}}' });
  const html = textArea('html', 12, { placeholder: '<p>Hello {{name}}</p>' });
  const text = textArea('text', 6, { placeholder: 'Hello {{name}}' });
  const variables = textArea('variables', 5);
  const localizations = textArea('localizations', 5);
  const sample = textArea('sample_variables', 5);
  const locale = textInput('locale', { placeholder: 'de-CH' });

  /** Fills the editor's content fields from a stored version (name and alias belong to the template). */
  function fill(t) {
    subject.value = t.subject ?? '';
    html.value = t.html ?? '';
    text.value = t.text ?? '';
    variables.value = json(t.variables ?? []);
    localizations.value = json(t.localizations ?? {});
  }
  if (saved) {
    name.value = saved.name;
    alias.value = saved.alias ?? '';
    fill(saved);
  } else {
    variables.value = '[]';
    localizations.value = '{}';
  }
  sample.value = json(saved ? sampleFor(saved) : {});

  // The JSON boxes: parsed on every preview and save; a box that does not parse is marked and named.
  const parseBox = (box, label, kind) => {
    box.removeAttribute('aria-invalid');
    const source = box.value.trim();
    if (source === '') return kind === 'array' ? [] : {};
    let value;
    try {
      value = JSON.parse(source);
    } catch (err) {
      box.setAttribute('aria-invalid', 'true');
      throw new Error(`${label}: not JSON (${err.message})`, { cause: err });
    }
    const ok =
      kind === 'array' ? Array.isArray(value) : value !== null && typeof value === 'object' && !Array.isArray(value);
    if (!ok) {
      box.setAttribute('aria-invalid', 'true');
      throw new Error(`${label}: must be a JSON ${kind === 'array' ? 'array' : 'object'}`);
    }
    return value;
  };
  /** The content of a version as the API takes it; throws naming the JSON box that is wrong. */
  const content = () => ({
    subject: subject.value,
    html: html.value,
    text: text.value,
    variables: parseBox(variables, 'Variables', 'array'),
    localizations: parseBox(localizations, 'Localizations', 'object'),
  });

  // The preview: the service renders what is in the editor, so the result is what a send would store.
  const previewStatus = h('p', { class: 'preview-status', role: 'status', 'aria-live': 'polite' });
  const previewError = h('p', { class: 'form-error preview-error', role: 'alert', hidden: true });
  const renderedSubject = h('output', { class: 'preview-subject' });
  const frame = mailFrame({ title: 'Preview of the HTML' });
  const noHtml = h('p', { class: 'empty' }, 'No HTML part.');
  const renderedText = h('pre', { class: 'mail-text preview-text' });
  const noText = h('p', { class: 'empty' }, 'No text part.');
  const renderedParts = h(
    'div',
    { class: 'preview-output' },
    h('h3', { class: 'subhead' }, 'Subject'),
    renderedSubject,
    h('h3', { class: 'subhead' }, 'HTML'),
    frame,
    noHtml,
    h('h3', { class: 'subhead' }, 'Text'),
    renderedText,
    noText,
  );

  let timer;
  /** Each preview's number: an answer that arrives after a newer request was made is dropped. */
  let requested = 0;
  onCleanup(() => {
    clearTimeout(timer);
    requested += 1;
  });

  function showPreviewError(message) {
    previewError.textContent = message;
    previewError.hidden = false;
    previewStatus.textContent = 'The content does not render; the preview below is the last that did.';
    renderedParts.classList.add('stale');
  }

  function showRendered(r) {
    previewError.hidden = true;
    previewError.textContent = '';
    previewStatus.textContent = 'Rendered by the service from the content above (not saved).';
    renderedParts.classList.remove('stale');
    renderedSubject.textContent = r.subject;
    frame.srcdoc = r.html;
    frame.hidden = r.html === '';
    noHtml.hidden = r.html !== '';
    renderedText.textContent = r.text;
    renderedText.hidden = r.text === '';
    noText.hidden = r.text !== '';
  }

  async function runPreview() {
    const mine = ++requested;
    let body;
    try {
      body = {
        ...content(),
        sample_variables: parseBox(sample, 'Sample values', 'object'),
        ...(locale.value.trim() ? { locale: locale.value.trim() } : {}),
      };
    } catch (err) {
      showPreviewError(err.message);
      return;
    }
    // A version needs HTML or text: until there is some, asking the service would only answer that.
    if (body.html === '' && body.text === '') {
      previewError.hidden = true;
      previewStatus.textContent = 'Type HTML or text to see it rendered.';
      return;
    }
    previewStatus.textContent = 'Rendering…';
    try {
      const rendered = await previewTemplate(account.id, body);
      if (mine === requested) showRendered(rendered);
    } catch (err) {
      if (mine === requested) showPreviewError(err.message);
    }
  }

  function schedulePreview() {
    clearTimeout(timer);
    timer = setTimeout(runPreview, PREVIEW_DEBOUNCE_MS);
  }

  // Saving: the first save creates the template (version 1, published); each later one makes a new version.
  const unsaved = h('span', { class: 'unsaved', hidden: true }, 'Unsaved changes');
  const saveError = h('p', { class: 'form-error save-error', role: 'alert', hidden: true });
  const versionLine = h('p', { class: 'version-line' });
  const versionsCard = h('div');

  function markDirty() {
    unsaved.hidden = false;
  }
  for (const control of [name, alias, subject, html, text, variables, localizations])
    control.addEventListener('input', () => {
      markDirty();
      schedulePreview();
    });
  for (const control of [sample, locale]) control.addEventListener('input', schedulePreview);

  function showVersionLine() {
    if (!saved) {
      versionLine.textContent = 'Not saved yet: saving creates version 1 and publishes it.';
      return;
    }
    replaceChildren(
      versionLine,
      `Latest version ${saved.latest_version}, published version ${saved.published_version}`,
      saved.latest_version !== saved.published_version
        ? ' (sends use the published one until you publish the latest)'
        : '',
      `. Updated ${formatTime(saved.updated_at)}.`,
    );
  }

  const form = onSubmit(
    h(
      'form',
      { class: 'template-form', 'aria-label': 'Template' },
      h(
        'div',
        { class: 'grid-form' },
        field('Name', name),
        field('Alias', alias, 'Optional: a-z, 0-9, ".", "_" or "-"; sends may name the template by it.'),
      ),
      field('Subject', subject, 'Handlebars: {{name}} is replaced, nothing escaped.'),
      field('HTML', html, 'In HTML, {{name}} is HTML-escaped and {{{name}}} is not.'),
      field('Text', text),
      field(
        'Variables (JSON)',
        variables,
        'The declared variables: [{"name": "name", "required": false, "default": "there"}]. A variable used but not given fails a send unless it has a default or is not required.',
      ),
      field(
        'Localizations (JSON)',
        localizations,
        '{"de": {"subject": "Hallo {{name}}"}}: a send with locale de or de-CH uses them.',
      ),
      h(
        'div',
        { class: 'form-actions' },
        h('button', { type: 'submit', class: 'button primary' }, isNew ? 'Create template' : 'Save as new version'),
        unsaved,
      ),
      saveError,
    ),
    async () => {
      saveError.hidden = true;
      let body;
      try {
        body = { name: name.value.trim(), ...content() };
      } catch (err) {
        saveError.textContent = err.message;
        saveError.hidden = false;
        announce(err.message, 'error');
        return;
      }
      try {
        if (!saved) {
          const created = await createTemplate(account.id, alias.value ? { ...body, alias: alias.value } : body);
          announce(`Template ${created.name} created: version 1, published.`);
          navigate(`${listPath}/${created.id}`);
          return;
        }
        // An empty alias removes it.
        saved = await updateTemplate(account.id, saved.id, { ...body, alias: alias.value });
        unsaved.hidden = true;
        showName();
        showVersionLine();
        showVersions();
        announce(`Saved as version ${saved.latest_version}; sends still use version ${saved.published_version}.`);
      } catch (err) {
        saveError.textContent = err.message;
        saveError.hidden = false;
        announceError(err);
      }
    },
  );

  // Versions: pick one of 1..latest to view its content, load it into the editor or publish it.
  function showVersions() {
    if (!saved) return;
    const choice = h(
      'select',
      { name: 'version' },
      Array.from({ length: saved.latest_version }, (_, i) => saved.latest_version - i).map((n) =>
        h(
          'option',
          { value: n, selected: n === saved.latest_version },
          `Version ${n}${n === saved.published_version ? ' (published)' : ''}${n === saved.latest_version ? ' (latest)' : ''}`,
        ),
      ),
    );
    const shown = h('div', { class: 'version-view' });

    async function view() {
      const version = Number(choice.value);
      try {
        const v = await getTemplateVersion(account.id, saved.id, version);
        replaceChildren(
          shown,
          h(
            'h3',
            { class: 'subhead' },
            `Version ${v.version}`,
            v.version === saved.published_version ? [' ', pill('active', 'published')] : null,
          ),
          h(
            'dl',
            { class: 'facts one-column' },
            fact('Subject', h('code', {}, v.subject)),
            fact('HTML', v.html ? h('pre', { class: 'code' }, v.html) : '—'),
            fact('Text', v.text ? h('pre', { class: 'code' }, v.text) : '—'),
            fact('Variables', h('pre', { class: 'code' }, json(v.variables ?? []))),
            fact('Localizations', h('pre', { class: 'code' }, json(v.localizations ?? {}))),
          ),
          h(
            'div',
            { class: 'card-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary',
                onclick: () => {
                  fill(v);
                  markDirty();
                  runPreview();
                  announce(`Version ${v.version} is in the editor: saving it makes it the newest version.`);
                  subject.focus();
                },
              },
              `Load version ${v.version} into the editor`,
            ),
          ),
        );
      } catch (err) {
        announceError(err);
      }
    }

    async function publish(event) {
      const version = Number(choice.value);
      const button = event.currentTarget;
      button.disabled = true;
      try {
        saved = { ...saved, ...(await publishTemplate(account.id, saved.id, version)) };
        // The answer is the template at its latest version, as GET answers it.
        showVersionLine();
        showVersions();
        announce(`Version ${version} published: sends use it from now on.`);
      } catch (err) {
        announceError(err);
        button.disabled = false;
      }
    }

    replaceChildren(
      versionsCard,
      section(
        'Versions',
        h(
          'div',
          { class: 'toolbar' },
          field('Version', choice),
          h('button', { type: 'button', class: 'button secondary', onclick: view }, 'View version'),
          h('button', { type: 'button', class: 'button primary', onclick: publish }, 'Publish version'),
        ),
        h(
          'dl',
          { class: 'facts' },
          fact('Published version', h('span', { class: 'published-version' }, String(saved.published_version))),
          fact('Latest version', h('span', { class: 'latest-version' }, String(saved.latest_version))),
        ),
        shown,
      ),
    );
  }

  async function remove() {
    if (!(await confirmTemplateDeletion(saved))) return;
    try {
      await deleteTemplate(account.id, saved.id);
      announce(`Template ${saved.name} deleted.`);
      navigate(listPath);
    } catch (err) {
      announceError(err);
    }
  }

  // The card's title and Delete button name the template, so a save that renames it renames them.
  const title = h('h2', { class: 'card-title' });
  const deleteButton = saved
    ? h('button', { type: 'button', class: 'button danger small', onclick: () => remove() }, 'Delete')
    : null;
  function showName() {
    title.textContent = saved ? `Template ${saved.name}` : 'New template';
    deleteButton?.setAttribute('aria-label', `Delete template ${saved.name}`);
  }

  showName();
  showVersionLine();
  showVersions();
  void runPreview();

  return h(
    'div',
    { class: 'stack' },
    h('p', { class: 'back-link' }, h('a', { href: href(listPath) }, '← All templates')),
    h(
      'div',
      { class: 'split template-editor' },
      h(
        'section',
        { class: 'card' },
        h('div', { class: 'card-head' }, title, deleteButton),
        saved ? h('p', { class: 'sub' }, saved.id) : null,
        versionLine,
        form,
      ),
      section(
        'Preview',
        h(
          'div',
          { class: 'grid-form' },
          field('Sample values (JSON)', sample, 'The variables of a send, to render with: {"name": "Ann"}.'),
          field('Locale', locale, 'Renders the localization a send with this locale gets.'),
        ),
        previewStatus,
        previewError,
        renderedParts,
      ),
    ),
    versionsCard,
  );
}

/** `{{name}}` and `{{{name}}}`: the plain variables a template uses (blocks and paths are left to the operator). */
const PLAIN_VARIABLE = /\{\{\{?\s*([A-Za-z_][\w-]*)\s*\}?\}\}/g;
const NOT_VARIABLES = new Set(['else', 'this']);

/**
 * Sample values to start with, so a stored template previews at once: each declared variable's default, and
 * each other plain variable the content uses set to its own name (a visible placeholder).
 */
function sampleFor(t) {
  const sources = [t.subject, t.html, t.text, ...Object.values(t.localizations ?? {}).flatMap(Object.values)];
  const used = sources.flatMap((source) => [...(source ?? '').matchAll(PLAIN_VARIABLE)].map((m) => m[1]));
  const sample = Object.fromEntries(used.filter((n) => !NOT_VARIABLES.has(n)).map((n) => [n, n]));
  for (const v of t.variables ?? []) sample[v.name] = v.default !== undefined ? v.default : v.name;
  return sample;
}
