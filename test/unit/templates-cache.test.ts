import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { CompiledTemplateCache, compiledBytes } from '../../src/templates/template-cache.js';
import { renderTemplate, type TemplateSource } from '../../src/templates/template-engine.js';

const source = (n: number): TemplateSource => ({ subject: `v${n} {{x}}`, text: 't' });

describe('compiled templates are cached per version', () => {
  it('compiles a version once and answers the same compiled template after', () => {
    const cache = new CompiledTemplateCache(10);
    let loads = 0;
    const load = () => {
      loads++;
      return source(1);
    };
    const first = cache.compile('tpl_a@1', load);
    expect(cache.compile('tpl_a@1', load)).toBe(first);
    expect(cache.get('tpl_a@1')).toBe(first);
    expect(loads).toBe(1);
    expect(renderTemplate(first, { variables: { x: 'y' } }).subject).toBe('v1 y');
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new CompiledTemplateCache(2);
    cache.compile('a', source(1));
    cache.compile('b', source(2));
    cache.get('a');
    cache.compile('c', source(3));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });

  it('keeps at most maxBytes, as estimated from sources and tags, and never a version larger than that', () => {
    const cache = new CompiledTemplateCache(100, 40);
    const small = { subject: 'x'.repeat(8), text: 'y' }; // 9 characters, no tag: 18 bytes
    expect(compiledBytes(cache.compile('a', small))).toBe(18);
    cache.compile('b', small);
    cache.compile('c', small);
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
    const huge = cache.compile('huge', { subject: 'x'.repeat(30), text: 'y' });
    expect(renderTemplate(huge).subject).toHaveLength(30);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
    // A tag weighs as its compiled code does, far more than its characters.
    expect(
      compiledBytes(cache.compile('tag', { subject: '{{x}}', text: 't', variables: [{ name: 'x', required: false }] })),
    ).toBe(2 * 6 + 2048);
  });

  it('does not cache a version that does not compile', () => {
    const cache = new CompiledTemplateCache();
    expect(() => cache.compile('bad', { subject: '{{', text: 't' })).toThrow(AppError);
    expect(cache.get('bad')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
