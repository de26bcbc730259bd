import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in the repository's markdown leads to a file of the repository (and a `#fragment` to a
 * heading of it): a reader who clones the repository has nothing outside it, so a link that leaves it, or
 * names a file since moved, is a dead end. External links (`https:`, `mailto:`) are not followed.
 */
const root = path.resolve(import.meta.dirname, '../..');
/** The README and every markdown file under docs/, src/ (a module's README) and bench/. */
const docs = [
  'README.md',
  ...['docs', 'src', 'bench'].flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md'))
      .map((f) => `${dir}/${f}`),
  ),
].sort();

/** `[text](target)` outside code spans and fenced blocks; the target without an optional title. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The relative links of `file` (its text `markdown`) that lead nowhere, each with the reason. */
function danglingLinks(file: string, markdown = fs.readFileSync(path.join(root, file), 'utf8')): string[] {
  const dangling: string[] = [];
  for (const link of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: and the like
    const [target = '', fragment] = link.split('#', 2);
    if (target === '') {
      if (fragment && !anchorsOf(markdown).has(fragment)) dangling.push(`${link} (no such heading)`);
      continue;
    }
    const resolved = path.resolve(path.dirname(path.join(root, file)), decodeURIComponent(target));
    if (resolved !== root && !resolved.startsWith(root + path.sep)) {
      dangling.push(`${link} (outside the repository)`);
    } else if (!fs.existsSync(resolved)) {
      dangling.push(`${link} (no such file)`);
    } else if (fragment && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(fragment)) {
      dangling.push(`${link} (no such heading)`);
    }
  }
  return dangling;
}

describe('markdown links', () => {
  it('reads the README and the markdown of docs/, src/ and bench/', () => {
    expect(docs).toEqual(
      expect.arrayContaining([
        'README.md',
        'bench/README.md',
        'docs/api.md',
        'docs/benchmark.md',
        'src/delivery/README.md',
      ]),
    );
  });

  it.each(docs)('%s: every relative link resolves inside the repository', (file) => {
    expect(danglingLinks(file)).toEqual([]);
  });

  it('finds a link that leaves the repository, a missing file and a missing heading', () => {
    // As if it were docs/probe.md: read from the text, nothing is written into the tree.
    const probe =
      '# Probe\n[a](../../shared/CONTRACT.md) [b](nowhere.md) [c](api.md#no-such-heading) [d](#probe) [e](#elsewhere) `[f](code.md)`\n';
    expect(danglingLinks('docs/probe.md', probe)).toEqual([
      '../../shared/CONTRACT.md (outside the repository)',
      'nowhere.md (no such file)',
      'api.md#no-such-heading (no such heading)',
      '#elsewhere (no such heading)',
    ]);
  });
});
