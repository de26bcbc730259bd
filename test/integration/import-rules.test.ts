import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The import rules are proved by breaking them: an import that runs up a layer fails `npm run lint` (ESLint per
 * file, dependency-cruiser over the graph), and so does a circle. Neither writes into the tree: ESLint lints text
 * as if it were a file of the tree, and the graph rules run over a scratch tree of the same shape.
 */
const root = path.resolve(import.meta.dirname, '../..');
const { forbidden } = createRequire(import.meta.url)(path.join(root, '.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
};

describe('ESLint layer rules', () => {
  const eslint = new ESLint({ cwd: root });
  const violations = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
    // A path outside the project would only fail to parse: each probe stands in for a real file.
    expect(result!.messages.filter((m) => m.fatal)).toEqual([]);
    return result!.messages.filter(
      (m) => m.ruleId === 'no-restricted-imports' || m.ruleId === '@typescript-eslint/no-restricted-imports',
    );
  };

  it.each([
    ['src/errors.ts', "import { isDatabaseUnavailable } from './db/db-unavailable.js';"],
    ['src/config.ts', "import { loadEncryptionKey } from './secrets/encryption-key.js';"],
    ['src/domain/address.ts', "import { createSql } from '../db/sql.js';"],
    ['src/domain/entities/emails.ts', "import type { DeliveryDeps } from '../../delivery/delivery-deps.js';"],
    ['src/db/sql.ts', "import { createSendService } from '../services/send-service.js';"],
    ['src/delivery/email-sender.ts', "import { createTemporalClient } from '../temporal/client.js';"],
    ['src/inbound/smtp-listen.ts', "import { createSendService } from '../services/send-service.js';"],
    ['src/services/send-service.ts', "import { createTemporalClient } from '../temporal/client.js';"],
    ['src/http/error-handler.ts', "import { createSql } from '../db/sql.js';"],
    ['src/rpc/error-interceptor.ts', "import { errorHandler } from '../http/error-handler.js';"],
    ['src/api/email-api.ts', "import { createSql } from '../db/sql.js';"],
  ])('%s may not import: %s', async (file, line) => {
    expect(await violations(file, `${line}\nexport const probe = 1;\n`)).not.toEqual([]);
  });

  it('allows an import down the layers', async () => {
    expect(
      await violations(
        'src/services/send-service.ts',
        "import { invalid } from '../errors.js';\nexport const probe = invalid;\n",
      ),
    ).toEqual([]);
    expect(
      await violations(
        'src/domain/entities/scheduled.ts',
        "import type { LoadedEmail } from './delivery.js';\nexport type Probe = LoadedEmail;\n",
      ),
    ).toEqual([]);
  });
});

describe('ESLint type rules', () => {
  const eslint = new ESLint({ cwd: root });
  it('refuses a cast through unknown outside tests, and allows it in a test', async () => {
    const code = "export const n = ('1' as unknown as number) + 1;\n";
    const [inSrc] = await eslint.lintText(code, { filePath: path.join(root, 'src/domain/address.ts') });
    expect(inSrc!.messages.map((m) => m.ruleId)).toContain('no-restricted-syntax');
    const [inTest] = await eslint.lintText(code, { filePath: path.join(root, 'test/unit/address.test.ts') });
    expect(inTest!.messages.filter((m) => m.fatal || m.ruleId === 'no-restricted-syntax')).toEqual([]);
  });
});

describe('dependency-cruiser graph rules', () => {
  const scratch: string[] = [];
  afterAll(() => Promise.all(scratch.map((d) => fs.rm(d, { recursive: true, force: true }))));

  /** The rule names violated by a scratch tree of `files` (path -> source), cruised with the project's rules. */
  async function broken(files: Record<string, string>): Promise<string[]> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'import-rules-'));
    scratch.push(dir);
    for (const [file, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await fs.writeFile(path.join(dir, file), text);
    }
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const result = await cruise(['src'], { validate: true, ruleSet: { forbidden }, tsPreCompilationDeps: true });
      const output = result.output as { summary: { violations: { rule: { name: string } }[] } };
      return [...new Set(output.summary.violations.map((v) => v.rule.name))].sort();
    } finally {
      process.chdir(cwd);
    }
  }

  it('finds an import that runs up a layer', async () => {
    expect(
      await broken({
        'src/errors.ts': "import { down } from './db/db-unavailable.js';\nexport const x = down;\n",
        'src/db/db-unavailable.ts': 'export const down = 1;\n',
      }),
    ).toEqual(['kernel-imports-no-layer-above']);
    expect(
      await broken({
        'src/delivery/sender.ts': "import { client } from '../temporal/client.js';\nexport const x = client;\n",
        'src/temporal/client.ts': 'export const client = 1;\n',
      }),
    ).toEqual(['io-imports-no-layer-above']);
  });

  it('finds a circle of two files', async () => {
    expect(
      await broken({
        'src/delivery/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
        'src/delivery/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      }),
    ).toEqual(['no-circular']);
  });

  it('passes a tree whose imports run down', async () => {
    expect(
      await broken({
        'src/services/s.ts':
          "import { d } from '../domain/d.js';\nimport { r } from '../db/r.js';\nexport const s = d + r;\n",
        'src/db/r.ts': "import { d } from '../domain/d.js';\nexport const r = d;\n",
        'src/domain/d.ts': 'export const d = 1;\n',
      }),
    ).toEqual([]);
  });
});
