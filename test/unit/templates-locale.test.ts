import { describe, expect, it } from 'vitest';
import { compileTemplate, renderTemplate } from '../../src/templates/template-engine.js';
import { localeLookupChain } from '../../src/templates/template-locale.js';

describe('the locale lookup chain', () => {
  it.each([
    ['de-AT', ['de-at', 'de']],
    ['de', ['de']],
    ['DE-at', ['de-at', 'de']],
    ['zh-Hant-TW', ['zh-hant-tw', 'zh-hant', 'zh']],
    ['de-x-formal', ['de-x-formal', 'de']],
    ['en-US-u-ca-buddhist', ['en-us-u-ca-buddhist', 'en-us-u-ca', 'en-us', 'en']],
    ['', []],
  ])('%s → %j', (tag, chain) => {
    expect(localeLookupChain(tag)).toEqual(chain);
  });
});

describe('rendering a locale: localizations[tag], then its language, then the template, field by field', () => {
  const template = compileTemplate({
    subject: 'Hello {{name}}',
    html: '<p>Hello</p>',
    text: 'Hello',
    localizations: {
      de: { subject: 'Hallo {{name}}', html: '<p>Hallo</p>' },
      'de-AT': { subject: 'Servus {{name}}' },
      fr: { text: 'Bonjour' },
    },
  });
  const render = (locale?: string | null) => renderTemplate(template, { variables: { name: 'Ann' }, locale });

  it('takes each field from the most specific localization that has it', () => {
    expect(render('de-AT')).toEqual({ subject: 'Servus Ann', html: '<p>Hallo</p>', text: 'Hello', locale: 'de-AT' });
    expect(render('de-CH')).toEqual({ subject: 'Hallo Ann', html: '<p>Hallo</p>', text: 'Hello', locale: 'de' });
    expect(render('fr-CA')).toEqual({ subject: 'Hello Ann', html: '<p>Hello</p>', text: 'Bonjour', locale: 'fr' });
  });

  it('matches tags without regard to case, and answers the tag as the template spells it', () => {
    expect(render('DE-at').locale).toBe('de-AT');
    expect(render('De').subject).toBe('Hallo Ann');
  });

  it('renders the template’s own fields for no locale or an unknown one', () => {
    const own = { subject: 'Hello Ann', html: '<p>Hello</p>', text: 'Hello', locale: null };
    expect(render()).toEqual(own);
    expect(render(null)).toEqual(own);
    expect(render('ja-JP')).toEqual(own);
  });

  it('falls back for a field a localization leaves empty', () => {
    const t = compileTemplate({ subject: 'S', text: 'T', localizations: { de: { subject: '', text: 'D' } } });
    expect(renderTemplate(t, { locale: 'de' })).toEqual({ subject: 'S', html: null, text: 'D', locale: 'de' });
  });

  it('gives html a localization has even when the template has none', () => {
    const t = compileTemplate({ subject: 'S', text: 'T', localizations: { de: { html: '<b>{{x}}</b>' } } });
    expect(renderTemplate(t, { locale: 'de-DE', variables: { x: '<' } }).html).toBe('<b>&lt;</b>');
    expect(renderTemplate(t, { locale: 'en', variables: { x: '<' } }).html).toBeNull();
  });
});
