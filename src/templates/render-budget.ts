import { invalid } from '../errors.js';
import { formatBytes, LIMITS } from '../domain/limits.js';

/**
 * What one render may spend, charged while it runs (never after): each field's output against the send limit
 * for that field, and the work of the whole render in steps. A template is data a user stored, and a send hands
 * it data of its own: `{{#each}}` over a large array can ask for gigabytes of output, or (with bodies that
 * output nothing) for minutes of looping. Both stop here, at the step that crosses the bound, with a 400.
 */

export type RenderedField = 'subject' | 'html' | 'text';

/**
 * Steps one render may take: one per loop iteration, per block helper call (`if`, `unless`, `with`, `each`,
 * `lookup`) and per piece of output (a variable or a run of literal text). A 5,000-row table of ten cells is
 * about 110,000 steps; a million take some 100–300 ms, so a template that would loop longer is refused within
 * a fraction of a second instead of holding the event loop.
 */
export const MAX_RENDER_STEPS = 1_000_000;

interface FieldCap {
  max: number;
  unit: 'characters' | 'bytes';
  /** How the send limit reads in a message. */
  shown: string;
}

/** The send limits (domain/limits.ts): a rendered field that exceeds them could not be sent anyway. */
export const FIELD_CAPS: Readonly<Record<RenderedField, FieldCap>> = {
  subject: { max: LIMITS.subjectChars, unit: 'characters', shown: `${LIMITS.subjectChars} characters` },
  html: { max: LIMITS.htmlBytes, unit: 'bytes', shown: formatBytes(LIMITS.htmlBytes) },
  text: { max: LIMITS.textBytes, unit: 'bytes', shown: formatBytes(LIMITS.textBytes) },
};

/** Code points of `s` (a subject's limit is in characters, as a send counts them), without building an array. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The size of `s` in the unit `field` is capped in: characters (code points) for a subject, else UTF-8 bytes. */
export const measure = (field: RenderedField, s: string): number =>
  FIELD_CAPS[field].unit === 'bytes' ? Buffer.byteLength(s, 'utf8') : codePoints(s);

export class RenderBudget {
  private steps = 0;
  private field: RenderedField = 'subject';
  /** The field as messages name it (`html`, `localizations.de.html`). */
  private label: string = 'subject';
  private used = 0;

  constructor(
    private readonly maxSteps: number = MAX_RENDER_STEPS,
    private readonly caps: Readonly<Record<RenderedField, FieldCap>> = FIELD_CAPS,
  ) {}

  /** Starts charging output to `field` (each field has its own cap; the steps are the render's). */
  startField(field: RenderedField, label: string = field): void {
    this.field = field;
    this.label = label;
    this.used = 0;
  }

  /** One unit of work; throws once the render has taken more than its steps. */
  step(): void {
    if (++this.steps > this.maxSteps)
      throw invalid(
        `template ${this.label} takes more than ${this.maxSteps} steps to render (loops over too many items); render fewer items`,
      );
  }

  /**
   * Output about to be appended to the current field: a step, and a lower bound of its size against the field's
   * cap (UTF-16 units never outnumber UTF-8 bytes, and a string has at least half as many code points as units).
   * What this refuses is surely over the cap; what it lets through is measured exactly once, whole, when the field
   * ends (`finishField`), rather than piece by piece. The bound still keeps a field's output within twice its cap
   * in memory while it is built.
   */
  output(s: string): string {
    this.step();
    if (s !== '') this.charge(this.caps[this.field].unit === 'bytes' ? s.length : Math.ceil(s.length / 2));
    return s;
  }

  /**
   * `pieces` of literal text, `chars` UTF-16 units together, about to be appended: a step each, and their size
   * bounded below as `output` bounds one piece's (a sum of halves is at most the sum of the pieces' code points).
   */
  outputText(pieces: number, chars: number): void {
    this.steps += pieces - 1;
    this.step();
    this.charge(this.caps[this.field].unit === 'bytes' ? chars : Math.ceil(chars / 2));
  }

  /** Output of a known size (or a lower bound of it) charged to the current field. */
  private charge(size: number): void {
    this.used += size;
    if (this.used > this.caps[this.field].max) this.refuse();
  }

  /**
   * The field's whole output against its cap: measured exactly only when its length alone cannot settle it (a
   * UTF-16 unit is at most 3 UTF-8 bytes and at least half a code point), so the usual email is not walked again.
   */
  finishField(output: string): void {
    const cap = this.caps[this.field];
    const upperBound = cap.unit === 'bytes' ? output.length * 3 : output.length;
    if (upperBound > cap.max && measure(this.field, output) > cap.max) this.refuse();
  }

  private refuse(): never {
    const cap = this.caps[this.field];
    throw invalid(`template ${this.label} renders more than ${cap.shown}, the limit of an email's ${this.field}`);
  }

  /** The steps taken so far (for tests and the record). */
  get stepsTaken(): number {
    return this.steps;
  }
}
