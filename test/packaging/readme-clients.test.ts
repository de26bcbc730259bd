/**
 * The README's "Use it from your code" shows each language in five lines. Those lines must be ones a test runs:
 * the TypeScript block is the SDK README's first example (run as written by test/sdk/sdk-package.test.ts), the
 * Python block is docs/clients.md's first Python block (run by test/clients/python-clients.test.ts), and each line
 * of the Go block is a line of docs/clients.md's Go program (built and run by test/clients/go-client.test.ts).
 * So an edit to the README that the tested copies do not share fails here, and vice versa.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** The fenced blocks of one language in a markdown text (after `from`, when given), in order. */
function blocks(markdown: string, lang: string, from = ''): string[] {
  const text = from ? markdown.slice(markdown.indexOf(from)) : markdown;
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

const section = (() => {
  const readme = read('README.md');
  const start = readme.indexOf('## Use it from your code');
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
})();

describe("the README's client examples are the tested ones", () => {
  it('shows TypeScript, Go and Python in five lines each', () => {
    for (const lang of ['ts', 'go', 'python']) {
      const found = blocks(section, lang);
      expect(found, lang).toHaveLength(1);
      expect(found[0]!.trimEnd().split('\n'), lang).toHaveLength(5);
    }
  });

  it('TypeScript: the SDK README’s first example, run as written against the live service', () => {
    expect(blocks(section, 'ts')[0]).toBe(blocks(read('sdk/typescript/README.md'), 'ts')[0]);
  });

  it("Python: docs/clients.md's first Python block, run as written against the live service", () => {
    expect(blocks(section, 'python')[0]).toBe(blocks(read('docs/clients.md'), 'python', '## Python')[0]);
  });

  it("Go: every line is a line of docs/clients.md's Go program, built and run against the live service", () => {
    const program = blocks(read('docs/clients.md'), 'go', '## Go')[0]!
      .split('\n')
      // The program's lines as written, without the comments the README leaves out.
      .map((line) => line.replace(/\s+\/\/\s.*$/, '').trim());
    for (const line of blocks(section, 'go')[0]!.trimEnd().split('\n')) expect(program).toContain(line.trim());
  });
});
