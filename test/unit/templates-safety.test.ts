import { describe, expect, it } from 'vitest';
import Handlebars from 'handlebars';
import { AppError } from '../../src/errors.js';
import { compileTemplate, renderTemplate } from '../../src/templates/template-engine.js';

const html = (source: string, variables = {}) =>
  renderTemplate(compileTemplate({ subject: 's', html: source }), { variables }).html;

function refusal(f: () => unknown): AppError {
  try {
    f();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const compileHtml = (source: string) => () => compileTemplate({ subject: 's', html: source });

describe('templates reach nothing but the variables', () => {
  it.each([
    '{{constructor.name}}',
    '{{__proto__}}',
    '{{#with this}}{{constructor}}{{/with}}',
    '{{user.constructor}}',
    '{{user.__proto__.constructor.name}}',
    '{{lookup this "constructor"}}',
    '{{lookup (lookup user "constructor") "name"}}',
    '{{#each list}}{{constructor.name}}{{this.__defineGetter__}}{{/each}}',
    '{{list.constructor}}{{user.toString}}{{user.hasOwnProperty}}',
    '{{#with user}}{{__proto__.polluted}}{{/with}}',
    // Prototype methods are not even called: Handlebars calls a function it is handed as a block's argument.
    '{{#with user.toString}}{{this}}{{/with}}',
    '{{#if user.valueOf}}called{{/if}}{{#each list.entries}}{{this}}{{/each}}',
  ])('%s renders empty', (source) => {
    expect(html(source, { user: { name: 'n' }, list: [{ a: 1 }] })).toBe('');
  });

  it('renders own properties, even ones named as prototype properties', () => {
    expect(html('{{constructor}}|{{user.toString}}', { constructor: 'own', user: { toString: 'also own' } })).toBe(
      'own|also own',
    );
  });

  it('runs in its own Handlebars environment: nothing registered globally reaches a template', () => {
    Handlebars.registerHelper('leak', () => 'LEAKED');
    Handlebars.registerPartial('leaky', 'LEAKED');
    try {
      expect(refusal(compileHtml('{{leak}} {{leak 1}}')).message).toMatch(/unknown helper "leak"/);
      expect(refusal(compileHtml('{{> leaky}}')).message).toMatch(/partials/);
      // The global instance still has its own helpers: the engine removed or replaced none of them.
      expect(Handlebars.compile('{{#each a}}{{this}}{{/each}}')({ a: [1, 2] })).toBe('12');
    } finally {
      Handlebars.unregisterHelper('leak');
      Handlebars.unregisterPartial('leaky');
    }
  });
});

describe('templates run no helper but the built-in blocks and lookup', () => {
  it.each([
    ['{{> footer}}', 'partials ({{> name}}) are not supported'],
    ['{{#> layout}}x{{/layout}}', 'partials ({{> name}}) are not supported'],
    ['{{> (lookup . "p")}}', 'partials ({{> name}}) are not supported'],
    ['{{* decorator}}', 'decorators ({{* name}}) are not supported'],
    ['{{#* inline "p"}}x{{/inline}}', 'decorators ({{* name}}) are not supported'],
    ['{{log "x"}}', 'unknown helper "log"'],
    ['{{helperMissing}}x{{blockHelperMissing 1}}', 'unknown helper "blockHelperMissing"'],
    ['{{upper name}}', 'unknown helper "upper"'],
    ['{{name.first x}}', 'unknown helper "name.first"'],
    ['{{lookup a (upper b)}}', 'unknown helper "upper"'],
    ['{{#list items}}x{{/list}}', 'unknown helper "list"'],
    ['{{{{raw}}}}{{x}}{{{{/raw}}}} {{#$html}}x{{/$html}}', 'unknown helper "$html"'],
    ['{{$text "x"}}', 'unknown helper "$text"'],
    ['{{if a}}', 'if is a block: write {{#if ...}}...{{/if}}'],
    ['{{each a}}', 'each is a block'],
    ['{{#if a b}}x{{/if}}', '#if takes exactly one argument'],
    ['{{#with}}x{{/with}}', '#with takes exactly one argument'],
    ['{{#each a b}}x{{/each}}', '#each takes exactly one argument'],
    ['{{#each a key="x"}}x{{/each}}', '#each takes no option key'],
    ['{{#if a as |b|}}x{{/if}}', '#if takes no block parameters'],
    ['{{#each a as |b c d|}}x{{/each}}', '#each takes at most 2 block parameters'],
    ['{{#lookup a b}}x{{/lookup}}', 'lookup is not a block'],
    ['{{lookup a}}', 'lookup takes two arguments'],
  ])('%s does not compile: %s', (source, reason) => {
    const err = refusal(compileHtml(source));
    expect(err.kind).toBe('validation');
    expect(err.status).toBe(400);
    expect(err.message).toContain(reason);
  });

  it('takes if/unless/else chains, each with @data and block params, with, lookup and sections', () => {
    const source = [
      '{{#if vip}}VIP{{else if member}}M{{else}}-{{/if}}',
      '{{#unless n includeZero=true}}zero{{/unless}}',
      '{{#each rows as |row i|}}{{i}}:{{row.name}}{{#if @first}}^{{/if}}{{#if @last}}${{/if}};{{/each}}',
      '{{#each map}}{{@key}}={{this}},{{/each}}',
      '{{#with user as |u|}}{{u.name}}/{{name}}{{/with}}',
      '{{lookup labels code}}|{{#items}}<{{.}}>{{/items}}{{^none}}(none){{/none}}',
    ].join('|');
    const out = html(source, {
      vip: false,
      member: true,
      n: 0,
      rows: [{ name: 'a' }, { name: 'b' }],
      map: { x: 1, y: 2 },
      user: { name: 'U' },
      labels: { de: 'Deutsch' },
      code: 'de',
      items: ['p', 'q'],
      none: [],
    });
    expect(out).toBe('M||0:a^;1:b$;|x=1,y=2,|U/U|Deutsch|<p><q>(none)');
  });
});
