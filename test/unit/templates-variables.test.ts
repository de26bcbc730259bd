import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import {
  compileTemplate,
  renderTemplate,
  templateVariablesUsed,
  type TemplateSource,
} from '../../src/templates/template-engine.js';

const used = (html: string, subject = 's') => templateVariablesUsed(compileTemplate({ subject, html }));

function refusal(f: () => unknown): AppError {
  try {
    f();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('the variables a template uses', () => {
  it.each([
    [
      '{{name}} {{user.first}} {{this.plan}} {{./city}} {{[first name]}} {{"zip code"}}',
      ['name', 'user', 'plan', 'city', 'first name', 'zip code'],
    ],
    ['{{#if vip}}{{perk}}{{else}}{{pitch}}{{/if}}{{#unless off}}on{{/unless}}', ['vip', 'perk', 'pitch', 'off']],
    ['{{#each items}}{{name}} {{price}} {{@index}} {{this}}{{/each}}', ['items']],
    [
      '{{#each items as |item i|}}{{item.name}}{{i}}{{../currency}}{{@root.shop}}{{/each}}',
      ['items', 'currency', 'shop'],
    ],
    ['{{#with user}}{{first}}{{../greeting}}{{/with}}', ['user', 'greeting']],
    ['{{#each a}}{{#each b}}{{../../top}}{{../mid}}{{/each}}{{/each}}', ['a', 'top']],
    ['{{#each a}}x{{else}}{{empty_note}}{{/each}}', ['a', 'empty_note']],
    ['{{#rows}}{{cell}}{{/rows}}{{^none}}{{fallback}}{{/none}}', ['rows', 'none', 'fallback']],
    ['{{lookup labels code}} {{#each (lookup groups kind)}}{{/each}}', ['labels', 'code', 'groups', 'kind']],
    ['{{this}} {{@index}} {{constructor}} {{toString}} {{__proto__}}', []],
    ['{{#if a}}{{#if b}}{{c}}{{/if}}{{/if}}', ['a', 'b', 'c']],
  ])('%s uses %j', (html, names) => {
    expect(used(html)).toEqual(names);
  });

  it('gathers subject, html, text, then each localization (tags in order), in order of appearance', () => {
    const template = compileTemplate({
      subject: '{{s}}',
      html: '{{h}} {{s}}',
      text: '{{t}}',
      localizations: { fr: { html: '{{f}}' }, de: { subject: '{{d}}' } },
    });
    expect(templateVariablesUsed(template)).toEqual(['s', 'h', 't', 'd', 'f']);
  });
});

describe('rendering with variables', () => {
  const source: TemplateSource = {
    subject: 'Hi {{name}}',
    html: '<p>{{greeting}} {{name}}, {{plan}}{{#if coupon}} ({{coupon}}){{/if}} {{code}}</p>',
    variables: [
      { name: 'name' },
      { name: 'greeting', default: 'Hello' },
      { name: 'plan', required: true, default: 'free' },
      { name: 'coupon', required: false },
      { name: 'note', required: false },
    ],
  };
  const template = compileTemplate(source);

  it('fills defaults, renders optional ones empty, and uses what is given over a default', () => {
    expect(renderTemplate(template, { variables: { name: 'Ann', code: 'X' } }).html).toBe('<p>Hello Ann, free X</p>');
    expect(
      renderTemplate(template, { variables: { name: 'Ann', greeting: 'Hey', plan: 'pro', coupon: 'C5', code: 0 } })
        .html,
    ).toBe('<p>Hey Ann, pro (C5) 0</p>');
  });

  it('refuses a missing required variable, declared or only used, naming it (declared first, then by use)', () => {
    const err = refusal(() => renderTemplate(template, { variables: {} }));
    expect(err.kind).toBe('validation');
    expect(err.status).toBe(400);
    expect(err.message).toBe('template.variables.name is required');
    expect(refusal(() => renderTemplate(template, { variables: { name: 'Ann' } })).message).toBe(
      'template.variables.code is required',
    );
  });

  it('takes null as given, and undefined as missing', () => {
    expect(renderTemplate(template, { variables: { name: null, code: null } }).subject).toBe('Hi ');
    expect(
      refusal(() => renderTemplate(template, { variables: { name: 'A', code: undefined as unknown as null } })).message,
    ).toBe('template.variables.code is required');
  });

  it('reads own variables only, even one named __proto__, and never changes what it was given', () => {
    const t = compileTemplate({
      subject: 's',
      text: '{{[__proto__].x}}|{{x}}',
      variables: [{ name: 'x', required: false }],
    });
    const variables = JSON.parse('{"__proto__": {"x": "own"}}') as Record<string, { x: string }>;
    expect(renderTemplate(t, { variables }).text).toBe('own|');
    expect(Object.getPrototypeOf(variables)).toBe(Object.prototype);
  });

  it('requires a variable used only in a localization, whichever locale renders (the rule is the template’s)', () => {
    const t = compileTemplate({ subject: 's', text: 't', localizations: { fr: { text: '{{prenom}}' } } });
    expect(refusal(() => renderTemplate(t, { variables: {} })).message).toBe('template.variables.prenom is required');
  });

  it("renders data Handlebars' runtime could not (an object without a callable toString), calling nothing in it", () => {
    // Handlebars compares contexts with `!=`, which converts an object compared with a primitive; the engine
    // compares objects by identity, so nothing the data holds is called.
    const t = compileTemplate({ subject: 's', text: '{{#each a}}{{#each ../a}}[{{this}}]{{/each}}{{/each}}' });
    const out = renderTemplate(t, { variables: { a: [{ toString: 'x', valueOf: 'y' }, 1] } });
    expect(out.text).toBe('[[object Object]][1][[object Object]][1]');
  });
});
