/**
 * `stripped_text` of an inbound email (CONTRACT.md "Inbound mail"): the reply without the quoted text below it.
 *
 * The text is cut at the first line that starts what a mail client puts under a reply:
 * - the attribution line, "On <date>, <name> wrote:" (Gmail, Apple Mail, Thunderbird), also wrapped onto two
 *   lines as Gmail does for long names, and its common translations ("Am ... schrieb ...:", "Le ... a écrit :",
 *   "El ... escribió:", "Il ... ha scritto:", "Op ... schreef ...:", "Em ... escreveu:"); it must hold a digit
 *   (a date or a time always does), so that prose like "On the whole, she wrote:" is not taken for one;
 * - Outlook's "-----Original Message-----" (and its German and French forms);
 * - Outlook's header block, `From:` then `Sent:`/`Date:` and `Subject:` within the next lines, or the line of
 *   underscores Outlook puts above it;
 * - a signature delimiter, `-- ` (dash dash space) alone on its line (RFC 3676 4.3); a bare `--` is not one,
 *   it is too common as a rule in the text itself;
 * - the `>`-quoted lines that run to the end of what is left (blank lines among them): quoted lines with the
 *   reply's own text after them are an interleaved reply and are kept, as they give that text its context.
 * Trailing whitespace is then trimmed. A message that is nothing but quoted text strips to '' (the full text
 * is still in `text`).
 *
 * The sender controls the text, so the work is linear in its length: one pass over the lines, each looked at
 * with string tests and anchored regular expressions without nested or overlapping quantifiers, a few lines
 * of look-ahead at most, and only lines of a bounded length tested at all (no marker is longer).
 */
export function strippedText(text: string): string {
  const lines = text.split('\n');
  let cut = lines.length;
  for (let i = 0; i < lines.length && cut === lines.length; i++) {
    if (startsQuotedPart(lines, i)) cut = i;
  }
  // Before that cut, the run of quoted and blank lines that ends it, if it holds a quoted line.
  let start = cut;
  let quoted = false;
  while (start > 0) {
    const line = lines[start - 1]!;
    if (isQuoted(line)) quoted = true;
    else if (!isBlank(line)) break;
    start--;
  }
  if (quoted) cut = start;
  // The text itself is cut (its \r\n kept as they were), where line `cut` starts.
  let offset = 0;
  for (let i = 0; i < cut; i++) offset += lines[i]!.length + 1;
  return text.slice(0, Math.min(offset, text.length)).trimEnd();
}

/** No marker line is longer than this; a longer line is never tested (an attribution with a long name fits). */
const MAX_MARKER_LINE = 1000;
/** How far below a `From:` line Outlook's `Sent:` and `Subject:` lines may be. */
const HEADER_BLOCK_LINES = 6;

const isBlank = (line: string) => line.trim() === '';
const isQuoted = (line: string) => line.trimStart().startsWith('>');

/** Whether line `i` starts the quoted part: an attribution, Outlook's separator or header block, a signature. */
function startsQuotedPart(lines: string[], i: number): boolean {
  const raw = lines[i]!;
  if (raw.length > MAX_MARKER_LINE) return false;
  const line = raw.replace(/\r$/, '');
  if (line === '-- ') return true;
  const trimmed = line.trim();
  if (trimmed === '') return false;
  if (ORIGINAL_MESSAGE.test(trimmed)) return true;
  if (isAttribution(trimmed)) return true;
  // Gmail wraps a long attribution: "On <date> <Name> <address>" then "wrote:" on the next line.
  const next = lines[i + 1];
  if (next !== undefined && next.length <= MAX_MARKER_LINE && ATTRIBUTION_START.test(trimmed)) {
    const joined = `${trimmed} ${next.trim()}`;
    if (!isBlank(next) && !isAttribution(next.trim()) && isAttribution(joined)) return true;
  }
  if (UNDERSCORES.test(trimmed)) {
    const below = nextNonBlank(lines, i + 1);
    return below !== undefined && isHeaderBlock(lines, below);
  }
  return isHeaderBlock(lines, i);
}

/** Outlook's separator: "-----Original Message-----", "-----Ursprüngliche Nachricht-----", "-----Message d'origine-----". */
const ORIGINAL_MESSAGE =
  /^-{3,} ?(?:original message|ursprüngliche nachricht|message d'origine|mensaje original) ?-{3,}$/i;
/** The line of underscores Outlook draws above its header block. */
const UNDERSCORES = /^_{10,}$/;

/** How an attribution starts and ends in each language: string tests, linear whatever the line holds. */
const ATTRIBUTIONS: { start: string; ends: (line: string) => boolean }[] = [
  { start: 'On ', ends: (l) => l.endsWith(' wrote:') },
  // "Am 27.11.2026 um 10:02 schrieb Name <a@b>:"
  { start: 'Am ', ends: (l) => l.endsWith(':') && l.includes(' schrieb ') },
  // "Le ven. 27 nov. 2026 à 10:02, Name <a@b> a écrit :"
  { start: 'Le ', ends: (l) => l.endsWith(' a écrit :') || l.endsWith(' a écrit:') },
  { start: 'El ', ends: (l) => l.endsWith(' escribió:') },
  { start: 'Il ', ends: (l) => l.endsWith(' ha scritto:') },
  // "Op 27 nov. 2026 om 10:02 schreef Name <a@b>:"
  { start: 'Op ', ends: (l) => l.endsWith(':') && l.includes(' schreef ') },
  { start: 'Em ', ends: (l) => l.endsWith(' escreveu:') },
];
const ATTRIBUTION_START = /^(?:On|Am|Le|El|Il|Op|Em) \S/;

const isAttribution = (line: string): boolean =>
  ATTRIBUTIONS.some((a) => line.startsWith(a.start) && a.ends(line)) && /\d/.test(line);

function nextNonBlank(lines: string[], from: number): number | undefined {
  for (let i = from; i < lines.length && i < from + HEADER_BLOCK_LINES; i++) if (!isBlank(lines[i]!)) return i;
  return undefined;
}

/** "From:", "Sent:", "Subject:" as Outlook writes them, in English, German and French; bold in HTML-derived text. */
const FROM_FIELD = /^\*?(?:From|Von|De):\*? /;
const DATE_FIELD = /^\*?(?:Sent|Date|Gesendet|Datum|Envoyé):\*? /;
const SUBJECT_FIELD = /^\*?(?:Subject|Betreff|Objet):\*?(?: |$)/;

/** Whether line `i` is `From:` with `Sent:` (or `Date:`) and `Subject:` in the lines below it. */
function isHeaderBlock(lines: string[], i: number): boolean {
  if (!FROM_FIELD.test(lines[i]!.trim())) return false;
  let date = false;
  for (let j = i + 1; j < lines.length && j <= i + HEADER_BLOCK_LINES; j++) {
    const line = lines[j]!;
    if (line.length > MAX_MARKER_LINE) return false;
    const trimmed = line.trim();
    if (DATE_FIELD.test(trimmed)) date = true;
    else if (SUBJECT_FIELD.test(trimmed)) return date;
  }
  return false;
}
