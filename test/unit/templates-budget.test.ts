import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { LIMITS } from '../../src/domain/limits.js';
import { MAX_RENDER_STEPS } from '../../src/templates/render-budget.js';
import {
  compileTemplate,
  renderTemplate,
  type TemplateSource,
  type TemplateVariables,
} from '../../src/templates/template-engine.js';

function refusal(f: () => unknown): AppError {
  try {
    f();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

/** Renders, and answers what it threw, how long it took and how much the heap grew meanwhile. */
function timed(source: TemplateSource, variables: TemplateVariables) {
  const template = compileTemplate(source);
  const heapBefore = process.memoryUsage().heapUsed;
  const start = performance.now();
  const err = refusal(() => renderTemplate(template, { variables }));
  return { err, ms: performance.now() - start, heapGrowth: process.memoryUsage().heapUsed - heapBefore };
}

const MiB = 1024 * 1024;
const items = Array.from({ length: 100_000 }, (_, i) => i);

describe('a render is bounded in output while it runs', () => {
  it('refuses a template whose html would be 640 MB in under a second, without building it', () => {
    const big = 'x'.repeat(6_400); // 100,000 × 6,400 bytes = 640 MB
    const { err, ms, heapGrowth } = timed({ subject: 's', html: '{{#each items}}{{../big}}{{/each}}' }, { items, big });
    expect(err.kind).toBe('validation');
    expect(err.message).toBe("template html renders more than 5 MB, the limit of an email's html");
    expect(ms).toBeLessThan(1_000);
    expect(heapGrowth).toBeLessThan(64 * MiB);
  });

  it('charges literal text inside loops at each repetition', () => {
    const { err, ms } = timed({ subject: 's', text: `{{#each items}}${'y'.repeat(6_400)}{{/each}}` }, { items });
    expect(err.message).toBe("template text renders more than 5 MB, the limit of an email's text");
    expect(ms).toBeLessThan(1_000);
  });

  it('charges escaped output as escaped (an & is 5 bytes in html)', () => {
    const amps = '&'.repeat(MiB + 1); // 5 MiB + 5 bytes once escaped
    expect(
      refusal(() => renderTemplate(compileTemplate({ subject: 's', html: '{{a}}' }), { variables: { a: amps } }))
        .message,
    ).toMatch(/template html renders more than 5 MB/);
    const raw = renderTemplate(compileTemplate({ subject: 's', html: '{{{a}}}' }), { variables: { a: amps } });
    expect(raw.html).toHaveLength(MiB + 1);
  });

  it('allows html and text of exactly the send limit, in UTF-8 bytes, and refuses one byte more', () => {
    const template = compileTemplate({ subject: 's', html: 'é{{{a}}}', text: '{{b}}' });
    const fill = 'a'.repeat(LIMITS.htmlBytes - 2); // 'é' is 2 bytes
    const out = renderTemplate(template, { variables: { a: fill, b: 'b'.repeat(LIMITS.textBytes) } });
    expect(Buffer.byteLength(out.html ?? '')).toBe(LIMITS.htmlBytes);
    expect(out.text).toHaveLength(LIMITS.textBytes);
    expect(refusal(() => renderTemplate(template, { variables: { a: `${fill}a`, b: '' } })).message).toMatch(
      /template html renders more than 5 MB/,
    );
  });

  it('refuses multi-byte output whose characters fit but whose UTF-8 bytes do not, measured as the field ends', () => {
    // 3 Mi 'é': 3 Mi UTF-16 units (under the 5 MB a piece is first charged by), 6 MiB in UTF-8.
    const template = compileTemplate({ subject: 's', html: '{{{a}}}', text: '{{#each parts}}{{this}}{{/each}}' });
    const e = 'é'.repeat(3 * MiB);
    expect(refusal(() => renderTemplate(template, { variables: { a: e, parts: [] } })).message).toBe(
      "template html renders more than 5 MB, the limit of an email's html",
    );
    expect(
      refusal(() => renderTemplate(template, { variables: { a: '', parts: [e.slice(0, MiB * 2), e.slice(0, MiB)] } }))
        .message,
    ).toBe("template text renders more than 5 MB, the limit of an email's text");
  });

  it('counts a subject in characters as a send does: 998 emoji pass, 999 do not', () => {
    const template = compileTemplate({ subject: '{{#each e}}{{this}}{{/each}}', text: 't' });
    const emoji = (n: number) => Array.from({ length: n }, () => '😀');
    expect([...renderTemplate(template, { variables: { e: emoji(LIMITS.subjectChars) } }).subject]).toHaveLength(998);
    expect(refusal(() => renderTemplate(template, { variables: { e: emoji(999) } })).message).toBe(
      "template subject renders more than 998 characters, the limit of an email's subject",
    );
  });

  it('names the localization whose field went over', () => {
    const template = compileTemplate({
      subject: 's',
      text: 't',
      localizations: { de: { text: '{{#each items}}{{../big}}{{/each}}' } },
    });
    const err = refusal(() => renderTemplate(template, { variables: { items, big: 'x'.repeat(6_400) }, locale: 'de' }));
    expect(err.message).toMatch(/^template localizations\.de\.text renders more than 5 MB/);
  });
});

describe('a render is bounded in work while it runs', () => {
  it.each([
    ['nested each', '{{#each a}}{{#each ../a}}{{/each}}{{/each}}'],
    ['nested sections', '{{#a}}{{#../a}}{{/../a}}{{/a}}'],
    ['each with empty ifs', '{{#each a}}{{#each ../a}}{{#if this}}{{/if}}{{/each}}{{/each}}'],
  ])('refuses %s over 100,000 items (10^10 iterations) quickly, by its steps', (_, html) => {
    const { err, ms } = timed({ subject: 's', html }, { a: items });
    expect(err.message).toBe(
      `template html takes more than ${MAX_RENDER_STEPS} steps to render (loops over too many items); render fewer items`,
    );
    expect(ms).toBeLessThan(1_000);
  });

  it('renders a large mail merge well inside the steps: 5,000 rows of 10 cells', () => {
    const rows = Array.from({ length: 5_000 }, (_, i) =>
      Object.fromEntries(Array.from({ length: 10 }, (_, c) => [`c${c}`, `${i}-${c}`])),
    );
    const cells = Array.from({ length: 10 }, (_, c) => `<td>{{c${c}}}</td>`).join('');
    const out = renderTemplate(
      compileTemplate({ subject: 's', html: `<table>{{#each rows}}<tr>${cells}</tr>{{/each}}</table>` }),
      {
        variables: { rows },
      },
    );
    expect(out.html).toContain('<tr><td>4999-0</td>');
  });
});
