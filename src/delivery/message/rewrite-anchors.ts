import { decodeHTMLAttribute } from 'entities';
import { QuoteType, Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/** The opt-out attribute: `<a data-mailer-track="false" href="...">` is left as it is. */
const OPT_OUT_ATTRIBUTE = 'data-mailer-track';

/** The `<a>` being read: where its first href's value is and its first opt-out's (browsers keep the first of repeated attributes). */
interface Anchor {
  href?: { start: number; end: number } | null;
  optOut?: { start: number; end: number } | null;
}

const noop = () => undefined;

/**
 * Replaces the href of every `<a>` for which `replace`, given the href as written, answers a value, keeping
 * everything else byte for byte (the attribute's quotes included).
 *
 * htmlparser2's tokenizer reads the tags as a browser does (a `>` inside quotes, an `<a` inside another
 * attribute or in script and style content, a tag cut off by the end of the HTML) and gives the offsets of
 * each attribute. Its tokenizer rather than its Parser: the Parser keeps open elements in an array it
 * shifts at the front, quadratic in hostile HTML of nested tags, while the tokenizer is one linear pass.
 * Entities are left to attributeValue, run only on the values that matter.
 */
export function rewriteAnchors(html: string, replace: (rawHref: string) => string | undefined): string {
  const parts: string[] = [];
  let copied = 0;
  let anchor: Anchor | undefined;
  let attribute: { name: 'href' | 'optOut'; nameEnd: number } | undefined;

  // Only a tag closed by its `>` counts: one cut off by the end of the HTML is left as it is.
  const tagEnd = () => {
    const optOut = anchor?.optOut && attributeValue(html.slice(anchor.optOut.start, anchor.optOut.end));
    const href = anchor?.href && optOut?.toLowerCase() !== 'false' ? anchor.href : undefined;
    const replacement = href && replace(html.slice(href.start, href.end));
    if (href && replacement !== undefined) {
      parts.push(html.slice(copied, href.start), replacement);
      copied = href.end;
    }
    anchor = undefined;
  };

  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      anchor = end - start === 1 && (html.charCodeAt(start) | 0x20) === 0x61 ? {} : undefined; // a or A
    },
    onattribname(start, end) {
      // Only names as long as the two wanted are sliced: a hostile tag may have millions of attributes.
      const name =
        anchor && (end - start === 4 || end - start === OPT_OUT_ATTRIBUTE.length)
          ? html.slice(start, end).toLowerCase()
          : '';
      const which = name === 'href' ? 'href' : name === OPT_OUT_ATTRIBUTE ? 'optOut' : undefined;
      attribute = which && anchor?.[which] === undefined ? { name: which, nameEnd: end } : undefined;
    },
    onattribend(quote, endIndex) {
      // A bare attribute has no value; endIndex is just past the value and its closing quote.
      if (anchor && attribute) {
        const at = {
          start: valueStart(html, attribute.nameEnd),
          end: quote === QuoteType.Unquoted ? endIndex : endIndex - 1,
        };
        anchor[attribute.name] = quote === QuoteType.NoValue ? null : at;
      }
      attribute = undefined;
    },
    onopentagend: tagEnd,
    onselfclosingtag: tagEnd,
    onattribdata: noop,
    onattribentity: noop,
    onclosetag: noop,
    oncdata: noop,
    oncomment: noop,
    ondeclaration: noop,
    onend: noop,
    onprocessinginstruction: noop,
    ontext: noop,
    ontextentity: noop,
  };
  const tokenizer = new Tokenizer({ decodeEntities: false }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
  if (copied === 0) return html;
  parts.push(html.slice(copied));
  return parts.join('');
}

/** HTML's whitespace: tab, line feed, form feed, carriage return, space. */
const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;

/** Where the value of an attribute starts, given the end of its name: past `=`, whitespace and an opening quote. */
function valueStart(html: string, nameEnd: number): number {
  let i = nameEnd;
  while (isWs(html.charCodeAt(i))) i++;
  i++; // the `=`
  while (isWs(html.charCodeAt(i))) i++;
  const c = html.charCodeAt(i);
  return c === 0x22 || c === 0x27 ? i + 1 : i;
}

/**
 * What a browser makes of an attribute value as written: references decoded (`entities`, in its attribute
 * mode), then ASCII whitespace stripped as for a URL or keyword (String.prototype.trim would also strip U+00A0).
 */
export function attributeValue(raw: string): string {
  return trimAsciiWhitespace(decodeHTMLAttribute(raw));
}

function trimAsciiWhitespace(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWs(s.charCodeAt(a))) a++;
  while (b > a && isWs(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}
