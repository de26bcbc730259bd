import { describe, expect, it } from 'vitest';
import type { TemplateDraft } from '../../src/domain/entities/templates.js';
import { LIMITS } from '../../src/domain/limits.js';
import {
  checkAlias,
  checkVersion,
  patchedDraft,
  TEMPLATE_LIMITS,
  templateDraft,
  type TemplateInput,
} from '../../src/domain/template-fields.js';
import { AppError } from '../../src/errors.js';

/** The 400 `run` throws, as AppError; fails the test when it throws nothing or something else. */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}
const refused = (input: Partial<TemplateInput>) => refusal(() => templateDraft({ ...base, ...input })).message;

const base: TemplateInput = { name: 'Welcome', subject: 'Hello {{name}}', html: '<p>Hi {{name}}</p>' };

describe('templateDraft', () => {
  it('normalizes a create body: no alias is null, bodies default to empty, variables are required by default', () => {
    expect(
      templateDraft({
        ...base,
        alias: 'welcome.v2_x-1',
        variables: [{ name: 'name' }, { name: 'plan', required: false }, { name: 'items', default: [{ n: 1 }] }],
        localizations: { 'de-AT': { subject: 'Servus {{name}}', html: '' }, de: { text: 'Hallo' } },
      }),
    ).toEqual({
      name: 'Welcome',
      alias: 'welcome.v2_x-1',
      content: {
        subject: 'Hello {{name}}',
        html: '<p>Hi {{name}}</p>',
        text: '',
        variables: [
          { name: 'name', required: true },
          { name: 'plan', required: false },
          { name: 'items', required: true, default: [{ n: 1 }] },
        ],
        // An empty override is none: the field falls back.
        localizations: { 'de-AT': { subject: 'Servus {{name}}' }, de: { text: 'Hallo' } },
      },
    });
    expect(templateDraft({ ...base, alias: '' }).alias).toBeNull();
    expect(templateDraft({ ...base, alias: null }).alias).toBeNull();
  });

  it('keeps a declared null default (it is a default) apart from none', () => {
    const [withNull, without] = templateDraft({
      ...base,
      variables: [{ name: 'a', default: null }, { name: 'b' }],
    }).content.variables;
    expect(withNull).toEqual({ name: 'a', required: true, default: null });
    expect(without && 'default' in without).toBe(false);
  });

  it('alias: 1-64 of a-z, 0-9, ".", "_" or "-", not starting tpl_', () => {
    const message = "alias must be 1-64 characters of a-z, 0-9, '.', '_' or '-'";
    for (const alias of ['Welcome', 'a b', 'a/b', 'é', 'x'.repeat(65), 'a\n']) expect(refused({ alias })).toBe(message);
    expect(checkAlias('x'.repeat(64))).toBe('x'.repeat(64));
    expect(refused({ alias: 'tpl_01abc' })).toBe("alias must not start with 'tpl_' (template ids do)");
    expect(checkAlias('tpl-x')).toBe('tpl-x');
  });

  it('name: required, at most 200 characters, one line', () => {
    expect(refused({ name: '' })).toBe('name is required');
    expect(refused({ name: '  ' })).toBe('name is required');
    expect(refused({ name: 'é'.repeat(201) })).toBe('name: length 201 exceeds the maximum of 200 characters');
    expect(templateDraft({ ...base, name: 'é'.repeat(200) }).name).toHaveLength(200);
    expect(refused({ name: 'a\nb' })).toBe('name must not contain control characters or line breaks');
  });

  it('subject: required, at most 998 characters, no line breaks', () => {
    expect(refused({ subject: '' })).toBe('subject is required');
    expect(refused({ subject: 'x'.repeat(999) })).toBe('subject: length 999 exceeds the maximum of 998 characters');
    expect(templateDraft({ ...base, subject: '😀'.repeat(998) }).content.subject).toBe('😀'.repeat(998));
    expect(refused({ subject: 'a\r\nBcc: x@example.com' })).toBe('subject must not contain line breaks');
  });

  it('html and text: one at least, each at most 5 MB', () => {
    expect(refused({ html: '', text: '' })).toBe('html or text is required: give at least one');
    expect(refused({ html: undefined })).toBe('html or text is required: give at least one');
    expect(refused({ html: 'x'.repeat(LIMITS.htmlBytes + 1) })).toBe(
      `html: length ${LIMITS.htmlBytes + 1} exceeds the maximum of ${LIMITS.htmlBytes} bytes (5 MB)`,
    );
    expect(refused({ text: 'é'.repeat(LIMITS.textBytes / 2 + 1) })).toMatch(/^text: length 5242882 exceeds/);
    expect(templateDraft({ ...base, html: 'x'.repeat(LIMITS.htmlBytes) }).content.html).toHaveLength(LIMITS.htmlBytes);
  });

  it('variables: Handlebars identifiers, unique, not reserved, bounded', () => {
    expect(refused({ variables: [{ name: 'a' }, { name: 'a' }] })).toBe('variables[1].name "a" is declared twice');
    expect(refused({ variables: [{ name: '' }] })).toBe('variables[0].name is required');
    for (const name of ['1st', 'a.b', 'a b', 'a}}', '@index', '../x'])
      expect(refused({ variables: [{ name }] })).toMatch(/^variables\[0\]\.name must be a Handlebars identifier/);
    for (const name of ['this', 'else', '__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(refused({ variables: [{ name }] })).toBe(`variables[0].name ${JSON.stringify(name)} is reserved`);
    expect(refused({ variables: [{ name: 'x'.repeat(65) }] })).toBe(
      'variables[0].name: length 65 exceeds the maximum of 64 characters',
    );
    const many = Array.from({ length: TEMPLATE_LIMITS.variables + 1 }, (_, i) => ({ name: `v${i}` }));
    expect(refused({ variables: many })).toBe('variables: 101 exceed the maximum of 100');
    expect(templateDraft({ ...base, variables: [{ name: 'first-name' }, { name: '_x' }] }).content.variables).toEqual([
      { name: 'first-name', required: true },
      { name: '_x', required: true },
    ]);
  });

  it("a variable's default is plain JSON, nested at most 32 deep", () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(refused({ variables: [{ name: 'a', default: deep as never }] })).toBe(
      'variables[0].default is nested deeper than 32 levels',
    );
    expect(refused({ variables: [{ name: 'a', default: Number.NaN }] })).toBe(
      'variables[0].default must be a finite number',
    );
    expect(refused({ variables: [{ name: 'a', default: new Date() as never }] })).toBe(
      'variables[0].default must be a JSON value',
    );
  });

  it('localizations: keys are language tags, unique whatever their case, each field under the send limits', () => {
    expect(refused({ localizations: { german: {} } })).toMatch(/^localizations\.german: "german" is not a locale/);
    expect(refused({ localizations: { de_AT: {} } })).toMatch(/^localizations\.de_AT: "de_AT" is not a locale/);
    expect(refused({ localizations: { __proto__x: {} } })).toMatch(/is not a locale/);
    expect(refused({ localizations: { 'de-AT': {}, 'de-at': {} } })).toBe(
      'localizations.de-at: the same locale as localizations.de-AT (tags ignore case)',
    );
    expect(refused({ localizations: { de: { subject: 'x'.repeat(999) } } })).toBe(
      'localizations.de.subject: length 999 exceeds the maximum of 998 characters',
    );
    expect(refused({ localizations: { de: { subject: 'a\nb' } } })).toBe(
      'localizations.de.subject must not contain line breaks',
    );
    expect(refused({ localizations: { fr: { html: 'x'.repeat(LIMITS.htmlBytes + 1) } } })).toMatch(
      /^localizations\.fr\.html: length 5242881 exceeds/,
    );
    expect(refused({ localizations: { fr: { text: 'x'.repeat(LIMITS.textBytes + 1) } } })).toMatch(
      /^localizations\.fr\.text: length 5242881 exceeds/,
    );
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`x-a${i}`, {}]));
    expect(refused({ localizations: many })).toBe('localizations: 51 locales exceed the maximum of 50');
    expect(Object.keys(templateDraft({ ...base, localizations: { 'zh-Hant-TW': {} } }).content.localizations)).toEqual([
      'zh-Hant-TW',
    ]);
  });

  it('one version whole is at most 20 MB', () => {
    const big = 'x'.repeat(LIMITS.htmlBytes);
    expect(
      refused({ html: big, text: big, localizations: { de: { html: big }, fr: { text: big, subject: 'x' } } }),
    ).toMatch(
      /^the template is 20971\d+ bytes \(subject, html, text, variables and localizations together\); the maximum is 20 MB$/,
    );
  });
});

describe('patchedDraft', () => {
  const current: TemplateDraft = templateDraft({
    ...base,
    alias: 'welcome',
    text: 'Hi',
    variables: [{ name: 'name' }],
    localizations: { de: { subject: 'Hallo' } },
  });

  it('replaces what the edit gives and keeps the rest', () => {
    expect(patchedDraft(current, { subject: 'New' })).toEqual({
      ...current,
      content: { ...current.content, subject: 'New' },
    });
    expect(patchedDraft(current, { name: 'Renamed', variables: [] })).toEqual({
      ...current,
      name: 'Renamed',
      content: { ...current.content, variables: [] },
    });
    expect(patchedDraft(current, {})).toEqual(current);
  });

  it('null or an empty alias removes it; undefined keeps it', () => {
    expect(patchedDraft(current, { alias: null }).alias).toBeNull();
    expect(patchedDraft(current, { alias: '' }).alias).toBeNull();
    expect(patchedDraft(current, { alias: undefined }).alias).toBe('welcome');
  });

  it('checks the result whole: an edit may not leave neither html nor text', () => {
    expect(patchedDraft(current, { html: '' }).content.html).toBe('');
    expect(refusal(() => patchedDraft(current, { html: '', text: '' })).message).toBe(
      'html or text is required: give at least one',
    );
    expect(refusal(() => patchedDraft(current, { alias: 'Bad Alias' })).message).toMatch(/^alias must be 1-64/);
  });
});

describe('checkVersion', () => {
  it('a whole number from 1 that an integer column holds', () => {
    expect(checkVersion('version', 1)).toBe(1);
    expect(checkVersion('version', 2_147_483_647)).toBe(2_147_483_647);
    for (const v of [0, -1, 1.5, 2_147_483_648, Number.NaN])
      expect(refusal(() => checkVersion('template.version', v)).message).toBe(
        `template.version must be a whole number from 1, got ${v}`,
      );
  });
});
