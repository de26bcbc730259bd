import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../src/config.js';
import { readConfigTable, renderConfigTable } from '../../scripts/config-table.js';

const root = path.resolve(import.meta.dirname, '../..');

describe('the README stays true', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

  it('documents every configuration variable config.ts reads', () => {
    const missing = describeConfig()
      .map((c) => c.env)
      .filter((env) => !readme.includes(`\`${env}\``));
    expect(missing).toEqual([]);
  });

  it('has the configuration table config.ts describes (npm run docs:config rewrites it)', () => {
    expect(readConfigTable(readme)).toBe(renderConfigTable());
  });

  it('shows the two commands', () => {
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });
});

describe('generated code', () => {
  it('src/gen is exactly what buf generates from proto/', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'gen-'));
    try {
      const template = JSON.stringify({
        version: 'v2',
        inputs: [{ directory: 'proto' }],
        plugins: [
          {
            local: path.join(root, 'node_modules/.bin/protoc-gen-es'),
            out,
            include_imports: true,
            opt: ['target=ts', 'import_extension=js'],
          },
        ],
      });
      execFileSync(path.join(root, 'node_modules/.bin/buf'), ['generate', '--template', template], {
        cwd: root,
        stdio: 'pipe',
      });
      const files = (dir: string): string[] =>
        fs
          .readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((d) => d.isFile())
          .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
          .sort();
      const expected = files(out);
      expect(files(path.join(root, 'src/gen'))).toEqual(expected);
      for (const f of expected) {
        expect(fs.readFileSync(path.join(root, 'src/gen', f), 'utf8'), `${f} is stale: run npm run generate`).toBe(
          fs.readFileSync(path.join(out, f), 'utf8'),
        );
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
