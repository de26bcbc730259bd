/**
 * A reader of nginx's configuration syntax (directives ending in `;`, blocks in `{}`, `#` comments, quoted
 * strings) into a tree, enough for tests to check deploy/nginx/nginx.conf's upstreams and listeners against
 * docker-compose.yml. It checks no directive's meaning: nginx itself does that (`nginx -t`).
 */
export interface Directive {
  name: string;
  args: string[];
  block?: Directive[];
}

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const re = /#[^\n]*|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([{};])|([^\s{};#"']+)/g;
  for (const m of text.matchAll(re)) {
    if (m[0].startsWith('#')) continue;
    tokens.push(m[1] ?? m[2] ?? m[3] ?? m[4]!);
  }
  return tokens;
}

export function parseNginxConf(text: string): Directive[] {
  const tokens = tokenize(text);
  let i = 0;
  const readBlock = (closing: boolean): Directive[] => {
    const out: Directive[] = [];
    let words: string[] = [];
    while (i < tokens.length) {
      const t = tokens[i++]!;
      if (t === ';') {
        if (words.length === 0) throw new Error('empty directive');
        out.push({ name: words[0]!, args: words.slice(1) });
        words = [];
      } else if (t === '{') {
        if (words.length === 0) throw new Error('block without a name');
        const [name, ...args] = words;
        words = [];
        out.push({ name: name!, args, block: readBlock(true) });
      } else if (t === '}') {
        if (!closing || words.length > 0) throw new Error('unbalanced } or a directive without ;');
        return out;
      } else {
        words.push(t);
      }
    }
    if (closing || words.length > 0) throw new Error('unexpected end of file: a block or directive is not closed');
    return out;
  };
  return readBlock(false);
}

/** Every directive named `name` directly inside `block`. */
export function children(block: Directive[] | undefined, name: string): Directive[] {
  return (block ?? []).filter((d) => d.name === name);
}

/** The one block named `name` directly inside `block` (throws unless there is exactly one). */
export function only(block: Directive[] | undefined, name: string): Directive {
  const found = children(block, name);
  if (found.length !== 1) throw new Error(`expected one ${name}, found ${found.length}`);
  return found[0]!;
}
