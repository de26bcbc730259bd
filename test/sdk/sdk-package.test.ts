import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from '../helpers/use-stack.js';

/**
 * The SDK as its users get it: `npm pack` (which builds it with its own tsconfig: web platform APIs only) gives a
 * tarball of dist/ alone; a project outside this repository installs it with npm, offline, from the npm cache
 * `npm ci` filled (a lock file names the root's versions of its dependencies, so nothing is looked up); and a
 * program made of sdk/typescript/README.md's ```ts examples, in order, plus a check that feeds a real webhook
 * to the README's handler and iterates that email's events, is type-checked against the installed package and
 * run against the live service. It sends, lists, iterates events and verifies a webhook; the README's examples
 * stay true.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'sdk/typescript');

const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-sdk-'));
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The README's ```ts blocks, in order. */
function readmeExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/**
 * Appended to the README's examples: a real delivery webhook, received on a local server, handed to the README's
 * POST handler as a fetch Request (204), then with its body tampered (400). Uses the examples' `mailer`.
 */
const WEBHOOK_CHECK = `
// ---- test/sdk/sdk-package.test.ts: the README's webhook handler, fed a real webhook.
import { createServer as __createServer } from 'node:http';
const __received: { headers: Record<string, string>; body: string }[] = [];
const __server = __createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    __received.push({ headers, body });
    res.end();
  });
});
await new Promise<void>((resolve) => __server.listen(0, '127.0.0.1', resolve));
const __port = (__server.address() as { port: number }).port;
const __hook = await mailer.webhooks.create({ url: \`http://127.0.0.1:\${__port}/hooks\`, events: ['delivery'] });
process.env.MAILER_WEBHOOK_SECRET = __hook.secret;
const __sent = await mailer.emails.send({ ...email, subject: 'webhook check' });
const __deadline = Date.now() + 30_000;
let __delivery: { headers: Record<string, string>; body: string } | undefined;
while (!(__delivery = __received.find((r) => r.body.includes(__sent.id))) && Date.now() < __deadline)
  await new Promise((r) => setTimeout(r, 100));
if (!__delivery) throw new Error('no delivery webhook came');
const __request = (body: string) => new Request('http://localhost/hooks', { method: 'POST', headers: __delivery!.headers, body });
console.log(\`handler answered \${(await POST(__request(__delivery.body))).status}\`);
console.log(\`tampered answered \${(await POST(__request(__delivery.body.replace('webhook check', 'webhook cheque')))).status}\`);
__server.close();
// The delivered email's events, read back through the cursor.
for await (const event of mailer.events.iterate({ emailId: __sent.id }, {})) console.log(\`iterated \${event.event}\`);
`;

describe('the packed SDK', () => {
  it('src/gen is exactly what sdk/typescript/buf.gen.yaml generates from proto/mail/v1', async () => {
    const out = path.join(work, 'gen');
    await run(
      path.join(ROOT, 'node_modules/.bin/buf'),
      ['generate', '--template', 'sdk/typescript/buf.gen.yaml', '-o', out],
      { cwd: ROOT, env: { ...process.env, PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` } },
    );
    const files = (dir: string) =>
      fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
        .sort();
    const generated = path.join(out, 'sdk/typescript/src/gen');
    const committed = path.join(SDK, 'src/gen');
    expect(files(committed)).toEqual(files(generated));
    for (const f of files(generated))
      expect(fs.readFileSync(path.join(committed, f), 'utf8'), `${f} is stale: run npm run generate`).toBe(
        fs.readFileSync(path.join(generated, f), 'utf8'),
      );
  });

  it("packs dist/ only, installs offline, and runs the README's examples against the live service", async () => {
    // Pack (prepack builds dist/ with the SDK's tsconfig).
    await run('npm', ['pack', '--pack-destination', work], { cwd: SDK });
    const tarball = path.join(work, 'mailer-sdk-0.1.0.tgz');
    const { stdout: listing } = await run('tar', ['-tzf', tarball]);
    const entries = listing.trim().split('\n').sort();
    expect(entries.filter((e) => !e.startsWith('package/dist/'))).toEqual([
      'package/README.md',
      'package/package.json',
    ]);
    expect(entries).toContain('package/dist/index.js');
    expect(entries).toContain('package/dist/index.d.ts');
    expect(entries.some((e) => e.endsWith('.ts') && !e.endsWith('.d.ts'))).toBe(false);

    // A project of its own, outside the repository; its lock pins the root's versions of what it installs.
    const project = path.join(work, 'app');
    fs.mkdirSync(project);
    const rootLock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string; integrity: string; license?: string }>;
    };
    const { stdout: registry } = await run('npm', ['config', 'get', 'registry'], { cwd: project });
    const pinned = ['@bufbuild/protobuf', '@connectrpc/connect', '@connectrpc/connect-web', '@connectrpc/connect-node'];
    pinned.push('@types/node', 'undici-types');
    const sdkManifest = JSON.parse(fs.readFileSync(path.join(SDK, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const dependencies: Record<string, string> = { '@mailer/sdk': `file:${tarball}` };
    const packages: Record<string, object> = {};
    for (const name of pinned) {
      const entry = rootLock.packages[`node_modules/${name}`]!;
      dependencies[name] = entry.version;
      packages[`node_modules/${name}`] = {
        version: entry.version,
        resolved: `${registry.trim().replace(/\/$/, '')}/${name}/-/${name.split('/')[1] ?? name}-${entry.version}.tgz`,
        integrity: entry.integrity,
      };
    }
    packages['node_modules/@mailer/sdk'] = {
      version: '0.1.0',
      resolved: `file:${tarball}`,
      integrity: `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`,
      dependencies: sdkManifest.dependencies,
    };
    const manifest = { name: 'sdk-readme', private: true, type: 'module', dependencies };
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(manifest, null, 2));
    fs.writeFileSync(
      path.join(project, 'package-lock.json'),
      JSON.stringify(
        {
          name: 'sdk-readme',
          lockfileVersion: 3,
          requires: true,
          packages: { '': { name: 'sdk-readme', dependencies }, ...packages },
        },
        null,
        2,
      ),
    );
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project }).catch(
      (err: { stderr?: string }) => {
        throw new Error(
          `installing the packed SDK offline failed; \`npm ci\` at the repository root fills the npm cache it installs from:\n${err.stderr ?? String(err)}`,
        );
      },
    );

    // The README's examples as one program, its 127.0.0.1:8080 and :8081 URLs pointed at this test's service.
    const readme = fs.readFileSync(path.join(SDK, 'README.md'), 'utf8');
    const examples = readmeExamples(readme);
    expect(examples.length).toBeGreaterThanOrEqual(8);
    const restOrigin = stack.api.replace(/\/v1\/mail$/, '');
    const program = [...examples, WEBHOOK_CHECK]
      .join('\n')
      .replaceAll('http://127.0.0.1:8080', restOrigin)
      .replaceAll('http://127.0.0.1:8081', `http://${stack.grpcAddress}`);
    fs.writeFileSync(path.join(project, 'readme.ts'), program);
    fs.writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022'],
          types: ['node'],
          strict: true,
          // As `tsc --init` writes it: connect-es's declarations name DOM types (HeadersInit) Node's lack.
          skipLibCheck: true,
          outDir: 'out',
        },
        files: ['readme.ts'],
      }),
    );
    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: project,
    }).catch((err: { stdout: string }) => ({ stdout: `tsc failed:\n${err.stdout}` }));
    expect(tsc.stdout).toBe('');

    const { stdout } = await run(process.execPath, ['out/readme.js'], {
      cwd: project,
      // The default account's key: its domain is example.com, as after `npm start`.
      env: { ...process.env, MAILER_API_KEY: stack.apiKey },
      timeout: 90_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^sent em_/);
    expect(stdout).toContain('Welcome, Ada');
    expect(stdout).toMatch(/^\d+ events, then \d+ new$/m);
    expect(stdout).toMatch(/^400 validation error .*html or text.* \S+$/m);
    expect(stdout).toContain('Over gRPC');
    expect(stdout).toMatch(/^webhook delivery of em_/m);
    expect(lines.slice(-4)).toEqual([
      'handler answered 204',
      'tampered answered 400',
      'iterated send',
      'iterated delivery',
    ]);
  });
});
