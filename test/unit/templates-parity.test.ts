import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/json.js';
import { compileTemplate, renderTemplate } from '../../src/templates/template-engine.js';

/*
 * The engine renders the parsed tree itself (template-interpreter.ts); Handlebars' own runtime is the reference.
 * Each case renders through both, as html (escaped) and as text (not), and must agree to the character.
 */

const reference = Handlebars.create();
const render = (source: string, data: object, escape: boolean): string =>
  reference.compile(source, {
    data: true,
    knownHelpers: { if: true, unless: true, each: true, with: true, lookup: true },
    knownHelpersOnly: true,
    strict: false,
    noEscape: !escape,
  })(data, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });

const people = [
  { name: 'Ann <a>', age: 0, tags: ['x', 'y'], address: { city: 'Köln & Bonn' } },
  { name: 'Bob', age: 41, tags: [], address: null },
  { name: '', age: -1.5, tags: ['z'], address: { city: '' } },
];
const data: JsonObject = {
  name: 'Zoë "Z" O\'Neil',
  n: 0,
  big: 1e21,
  yes: true,
  no: false,
  none: null,
  empty: '',
  list: ['a', 'b', 'c'],
  nested: [
    [1, 2],
    [3, [4, 5]],
  ],
  emptyList: [],
  obj: { b: 2, a: 1, '0': 'zero', 'a b': 'spaced' },
  emptyObj: {},
  people,
  currency: 'EUR',
  key: 'b',
  idx: 1,
  html: '<b>&amp;</b>`=',
  'a b': 'top-level spaced',
};

const CASES: [string, string][] = [
  [
    'paths',
    '{{name}}|{{obj.a}}|{{obj.missing.deep}}|{{none.x}}|{{list.[1]}}|{{name.length}}|{{list.length}}|{{obj.[a b]}}',
  ],
  [
    'values',
    '{{n}} {{big}} {{yes}} {{no}} {{none}} {{empty}} {{list}} {{nested}} {{obj}} {{emptyList}} {{people.0.age}}',
  ],
  ['escaping', '{{html}}|{{{html}}}|{{&html}}|{{name}}'],
  ['this', '{{this.name}} {{./name}} {{#with obj}}{{this.a}}{{.}}{{/with}}'],
  ['literal path', '{{"a b"}} {{[a b]}} {{#with obj}}{{"a b"}}{{/with}}'],
  [
    'if chain',
    '{{#if n}}n{{else if yes}}yes{{else}}else{{/if}}|{{#if n includeZero=true}}zero{{/if}}|{{#if emptyList}}e{{else}}none{{/if}}|{{#if emptyObj}}obj{{/if}}|{{#if empty}}x{{else}}blank{{/if}}',
  ],
  [
    'unless',
    '{{#unless no}}not no{{else}}no{{/unless}}|{{#unless n includeZero=true}}u{{else}}z{{/unless}}|{{^if yes}}x{{else}}y{{/if}}',
  ],
  [
    'with',
    '{{#with obj as |o|}}{{o.a}}-{{b}}{{../name}}{{/with}}|{{#with none}}x{{else}}nothing{{/with}}|{{#with n}}[{{this}}]{{/with}}',
  ],
  [
    'each array',
    '{{#each list}}{{@index}}-{{@key}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}}{{this}}{{../currency}};{{/each}}',
  ],
  ['each object', '{{#each obj}}{{@key}}={{this}}{{#unless @last}},{{/unless}}{{/each}}'],
  [
    'each else',
    '{{#each emptyList}}x{{else}}empty{{/each}}|{{#each name}}s{{else}}string{{/each}}|{{#each n}}x{{else}}num{{/each}}',
  ],
  [
    'block params',
    '{{#each people as |p i|}}{{i}}:{{p.name}}({{#each p.tags as |t|}}{{t}}{{p.age}}{{/each}}){{/each}}',
  ],
  [
    'nested each and data',
    '{{#each people}}{{#each tags}}{{@../index}}.{{@index}}{{this}}{{../name}}{{@root.currency}}{{../../currency}}|{{/each}}{{/each}}',
  ],
  ['parent in if', '{{#if yes}}{{../name}}{{name}}{{/if}}{{#each list}}{{#if ../yes}}{{../currency}}{{/if}}{{/each}}'],
  [
    'sections',
    '{{#yes}}T{{/yes}}{{#no}}F{{else}}notF{{/no}}{{#list}}[{{this}}]{{/list}}{{#obj}}{{a}}{{/obj}}{{#name}}{{this}}{{/name}}{{#n}}zero{{/n}}{{#empty}}e{{/empty}}{{#emptyList}}x{{else}}el{{/emptyList}}',
  ],
  [
    'inverted sections',
    '{{^no}}A{{/no}}{{^yes}}B{{/yes}}{{^emptyList}}C{{/emptyList}}{{^list}}D{{/list}}{{^none}}E{{/none}}{{^n}}F{{/n}}',
  ],
  [
    'lookup',
    '{{lookup obj key}}|{{lookup list idx}}|{{lookup list 0}}|{{lookup none "x"}}|{{lookup n "x"}}|{{#each list}}{{lookup ../list @index}}{{/each}}|{{#with (lookup people 1)}}{{name}}{{/with}}|{{#each (lookup obj "missing")}}x{{else}}m{{/each}}',
  ],
  ['whitespace', 'a  {{~name~}}  b\n{{#each list}}\n  - {{this}}\n{{/each}}\nend {{!-- comment --}}{{! another }}'],
  ['deep parents', '{{#each people}}{{#with address}}{{city}}{{../name}}{{../../currency}}{{/with}}{{/each}}'],
  ['mail merge', '{{#each people}}<tr><td>{{name}}</td><td>{{#if age}}{{age}}{{else}}-{{/if}}</td></tr>{{/each}}'],
];

describe("the engine renders as Handlebars' own runtime does", () => {
  it('except that adjacent numbers in unescaped output are written, not added', () => {
    // Handlebars' runtime appends `{{{a}}}{{{b}}}` as one `a + b`, so 1 and 2 render 3 (and in text, `{{a}}{{b}}`).
    expect(render('{{{a}}}{{{b}}}', { a: 1, b: 2 }, true)).toBe('3');
    const template = compileTemplate({ subject: 's', html: '{{{a}}}{{{b}}}', text: '{{a}}{{b}}' });
    expect(renderTemplate(template, { variables: { a: 1, b: 2 } })).toMatchObject({ html: '12', text: '12' });
  });

  for (const [what, source] of CASES) {
    it(what, () => {
      const template = compileTemplate({ subject: 's', html: source, text: source });
      const ours = renderTemplate(template, { variables: data });
      expect(ours.html).toBe(render(source, data, true));
      expect(ours.text).toBe(render(source, data, false));
    });
  }
});
