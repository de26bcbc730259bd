import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { MAX_FIELD_TAGS, MAX_TEMPLATE_NESTING, MAX_VERSION_TAGS } from '../../src/templates/template-syntax.js';
import { compileTemplate, type TemplateSource } from '../../src/templates/template-engine.js';

function message(source: TemplateSource): string {
  try {
    compileTemplate(source);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'validation') return err.message;
    throw err;
  }
  throw new Error('expected the template not to compile');
}

describe('a template that does not compile is a 400 naming the field, line and column', () => {
  it.each([
    [
      { subject: 's', html: '<p>\n<b>\n  {{#if x}}\n{{/iff}}' },
      "template html does not compile at line 3, column 6: if doesn't match iff",
    ],
    [
      { subject: 's', html: 'one\ntwo {{{name}}' },
      "template html does not compile at line 2, column 12: unexpected '}}'",
    ],
    [
      { subject: 'Hi {{name', text: 't' },
      "template subject does not compile at line 1, column 6: unexpected text (is a '}}' missing?)",
    ],
    [
      { subject: 's', text: 'a\n\nb {{#each items}}' },
      'template text does not compile at line 3, column 18: unexpected end of the template (is a block not closed?)',
    ],
    [
      { subject: 's', text: 'x {{!-- open comment' },
      'template text does not compile at line 1, column 3: unrecognized text',
    ],
    [
      { subject: 's', html: 'a\n  {{> footer}}' },
      'template html does not compile at line 2, column 3: partials ({{> name}}) are not supported',
    ],
    [
      { subject: 's', html: 'ok', localizations: { de: { subject: 'ok', html: '\n\n\n   {{upper name}}' } } },
      'template localizations.de.html does not compile at line 4, column 4: unknown helper "upper": templates may use only if, unless, each and with (as blocks) and lookup',
    ],
    [
      { subject: 's', text: 't', localizations: { 'de-AT': { subject: '{{#with a}}' } } },
      'template localizations.de-AT.subject does not compile at line 1, column 12: unexpected end of the template (is a block not closed?)',
    ],
  ])('%j', (source, expected) => {
    expect(message(source)).toBe(expected);
  });

  it('names the first field that fails, in the order subject, html, text, then localizations', () => {
    expect(message({ subject: '{{a', html: '{{b', text: '{{c' })).toMatch(/^template subject /);
    expect(message({ subject: 's', html: '{{b', text: '{{c' })).toMatch(/^template html /);
    expect(message({ subject: 's', text: '{{c', localizations: { de: { text: '{{d' } } })).toMatch(/^template text /);
  });

  it(`refuses blocks and sub-expressions nested deeper than ${MAX_TEMPLATE_NESTING}, quickly however deep`, () => {
    const nested = (n: number) => '{{#if a}}'.repeat(n) + '{{/if}}'.repeat(n);
    const chain = (n: number) => `{{#if a}}${'{{else if b}}x'.repeat(n)}{{/if}}`;
    const sub = (n: number) => '{{lookup '.concat('(lookup '.repeat(n), 'a b', ') b'.repeat(n), '}}');
    for (const ok of [nested(MAX_TEMPLATE_NESTING), chain(MAX_TEMPLATE_NESTING - 1), sub(MAX_TEMPLATE_NESTING)])
      expect(() => compileTemplate({ subject: 's', html: ok })).not.toThrow();
    // Handlebars' parser takes seconds over a few thousand levels: these are refused before it runs.
    const start = performance.now();
    expect(message({ subject: 's', html: nested(MAX_TEMPLATE_NESTING + 1) })).toBe(
      `template html does not compile at line 1, column ${9 * MAX_TEMPLATE_NESTING + 1}: blocks nest deeper than ${MAX_TEMPLATE_NESTING}`,
    );
    // (Within the tag cap: 4,800 and 4,902 tags.)
    expect(message({ subject: 's', html: nested(2_400) })).toMatch(/blocks nest deeper than 100$/);
    expect(message({ subject: 's', html: chain(4_900) })).toMatch(/blocks nest deeper than 100$/);
    expect(message({ subject: 's', html: `\n${sub(50_000)}` })).toMatch(
      /^template html does not compile at line 2, column 810: sub-expressions nest deeper than 100$/,
    );
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it('counts only real blocks: sequences, comments, escaped mustaches, {{^}} and raw blocks do not nest', () => {
    const many = (s: string) => s.repeat(MAX_TEMPLATE_NESTING * 2);
    const html = [
      many('{{#if a}}x{{else}}y{{/if}}'),
      `{{!-- ${many('{{#if a}}')} --}}`,
      `{{! ${many('(')} }}`,
      many('\\{{#if a}}'),
      many('{{#if a}}x{{^}}y{{/if}}'),
      `{{{{raw}}}}${many('{{#if a}}')}{{{{/raw}}}}`,
    ].join('\n');
    expect(() => compileTemplate({ subject: 's', html })).not.toThrow();
  });

  it(`refuses more than ${MAX_FIELD_TAGS} tags in a field, or ${MAX_VERSION_TAGS} in a version, before compiling`, () => {
    const tags = (n: number) => '<td>{{a}}</td>\n'.repeat(n);
    expect(() => compileTemplate({ subject: 's', html: tags(MAX_FIELD_TAGS) })).not.toThrow();
    const start = performance.now();
    expect(message({ subject: 's', html: `{{{b}}}{{{{r}}}}x{{{{/r}}}}\\{{c}}${tags(MAX_FIELD_TAGS)}` })).toBe(
      `template html does not compile at line ${MAX_FIELD_TAGS - 2}, column 5: more than ${MAX_FIELD_TAGS} {{ }} tags in one field`,
    );
    const fields = (n: number) => ({ subject: 's', html: tags(n), text: tags(n) });
    const big = tags(MAX_FIELD_TAGS - 1);
    expect(
      message({ ...fields(MAX_FIELD_TAGS - 1), localizations: { de: { html: big }, fr: { html: big, text: big } } }),
    ).toBe(
      `template does not compile: its fields and localizations hold more than ${MAX_VERSION_TAGS} {{ }} tags together`,
    );
    // Refused by counting: compiling 25,000 tags would take over a second.
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});
