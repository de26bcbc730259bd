import { describe, expect, it } from 'vitest';
import { compileTemplate, renderTemplate } from '../../src/templates/template-engine.js';

const render = (fields: { subject?: string; html?: string; text?: string }, variables = {}, optional: string[] = []) =>
  renderTemplate(
    compileTemplate({
      subject: fields.subject ?? 's',
      html: fields.html,
      text: fields.text,
      variables: optional.map((name) => ({ name, required: false })),
    }),
    { variables },
  );

const nasty = `<a href="x">'&'</a>\`=`;

describe('template escaping', () => {
  it('escapes {{x}} in html and leaves {{{x}}} and {{&x}} as given', () => {
    const out = render({ html: '{{x}}|{{{x}}}|{{&x}}' }, { x: nasty });
    expect(out.html).toBe(
      '&lt;a href&#x3D;&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/a&gt;&#x60;&#x3D;|' + `${nasty}|${nasty}`,
    );
  });

  it('escapes nothing in subject and text', () => {
    const out = render({ subject: 'Hi {{x}} {{{x}}}', text: '{{x}}\n{{{x}}}' }, { x: nasty });
    expect(out.subject).toBe(`Hi ${nasty} ${nasty}`);
    expect(out.text).toBe(`${nasty}\n${nasty}`);
  });

  it('escapes inside blocks and lookups as at the top level; literal text stays as written', () => {
    const out = render(
      { html: '<ul>{{#each items}}<li class="a">{{this}}</li>{{/each}}</ul>{{lookup labels key}}' },
      { items: ['<b>', '&'], labels: { k: '<i>' }, key: 'k' },
    );
    expect(out.html).toBe('<ul><li class="a">&lt;b&gt;</li><li class="a">&amp;</li></ul>&lt;i&gt;');
  });

  it('prints values as Handlebars does: nothing for null and missing, numbers, booleans, arrays joined', () => {
    const out = render(
      { text: '[{{n}}][{{u}}][{{z}}][{{f}}][{{a}}][{{o}}]', html: '{{a}}' },
      { n: null, z: 0, f: false, a: [1, 'b', null, [2, 3]], o: { toString: 'not a function' } },
      ['u'],
    );
    expect(out.text).toBe('[][][0][false][1,b,,2,3][[object Object]]');
    expect(out.html).toBe('1,b,,2,3');
  });

  it('keeps Handlebars whitespace control: ~ and standalone block lines', () => {
    const out = render({ text: 'a\n{{#if x}}\n  b\n{{/if}}\nc {{~x~}} d' }, { x: 'X' });
    expect(out.text).toBe('a\n  b\ncXd');
  });

  it('renders html and text absent when the template has none', () => {
    const out = render({ text: 't' });
    expect(out).toEqual({ subject: 's', html: null, text: 't', locale: null });
  });
});
