/**
 * A reader of Dockerfile syntax (instructions, `\` continuations, comments, ARG defaults before FROM,
 * stages) and of .dockerignore's patterns, enough for tests to check the Dockerfile against the repository
 * without Docker. It checks what the files say, not what BuildKit would do with every flag.
 */
export interface Instruction {
  keyword: string;
  /** The arguments as written, after flags such as `--from=build`. */
  args: string;
  flags: Record<string, string>;
}

export interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

/** Logical lines: comments dropped, `\` continuations joined (a comment line inside one is skipped too). */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    out.push(`${current}${line}`.trim());
    current = '';
  }
  if (current.trim() !== '') out.push(current.trim());
  return out.filter((l) => l !== '');
}

function parseInstruction(line: string): Instruction {
  const [keyword, ...rest] = line.split(/\s+/);
  const flags: Record<string, string> = {};
  const words = [...rest];
  while (words[0]?.startsWith('--')) {
    const [key, value] = words.shift()!.slice(2).split('=');
    flags[key!] = value ?? 'true';
  }
  return { keyword: keyword!.toUpperCase(), args: words.join(' '), flags };
}

export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of logicalLines(text).map(parseInstruction)) {
    if (ins.keyword === 'ARG' && stages.length === 0) {
      const [name, value] = ins.args.split('=');
      args[name!] = value ?? '';
    } else if (ins.keyword === 'FROM') {
      const [image, as, name] = ins.args.split(/\s+/);
      const resolved = image!.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_m, a: string | undefined, b: string | undefined) => args[(a ?? b)!] ?? '',
      );
      stages.push({ name: as?.toUpperCase() === 'AS' ? name : undefined, image: resolved, instructions: [] });
    } else {
      if (stages.length === 0) throw new Error(`${ins.keyword} before FROM`);
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return { args, stages };
}

/** A COPY's sources and destination, in its JSON or space-separated form. */
export function copyPaths(ins: Instruction): { sources: string[]; dest: string } {
  const parts = ins.args.startsWith('[') ? (JSON.parse(ins.args) as string[]) : ins.args.split(/\s+/);
  return { sources: parts.slice(0, -1), dest: parts.at(-1)! };
}

/** A JSON-form (exec) CMD, ENTRYPOINT or HEALTHCHECK CMD as its words. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  return JSON.parse(json) as string[];
}

/** .dockerignore's rules: Go filepath.Match patterns with `**`, `!` exceptions, the last match winning. */
export function dockerignore(text: string): (relativePath: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).trim().replace(/^\/+/, '').replace(/\/+$/, '');
      const source = pattern
        .split('/')
        .map((seg) =>
          seg === '**'
            ? '.*'
            : seg
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/');
      return { negate, re: new RegExp(`^${source.replace(/\.\*\//g, '(?:.*/)?')}$`) };
    });
  return (relativePath) => {
    // A path is excluded when it or a directory above it matches (docker excludes a directory's contents).
    const parts = relativePath.split('/');
    const candidates = parts.map((_p, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (candidates.some((c) => rule.re.test(c))) excluded = !rule.negate;
    }
    return excluded;
  };
}
