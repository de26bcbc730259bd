import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeConfig } from '../../src/config.js';
import { copyPaths, dockerignore, execForm, parseDockerfile, type Stage } from '../helpers/dockerfile.js';

/**
 * The Dockerfile against the repository, without Docker: what it copies exists and reaches the build
 * context, the runtime stage has the compiled service, the CLI and production dependencies only, runs as a
 * non-root user, and its CMD and HEALTHCHECK name files it has. test/packaging/image-layout.test.ts runs the
 * build steps themselves.
 */
const root = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const { stages } = parseDockerfile(read('Dockerfile'));
const ignored = dockerignore(read('.dockerignore'));
const pkg = JSON.parse(read('package.json')) as {
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
  oclif: { commands: string };
};
const runtime = stages.at(-1)!;
const stage = (name: string) => stages.find((s) => s.name === name)!;
const all = (s: Stage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword);
const WORKDIR = '/app';

/** Where a runtime-stage destination lands (relative destinations are under WORKDIR). */
const inImage = (dest: string) => path.posix.resolve(WORKDIR, dest);

describe('Dockerfile', () => {
  it('builds in stages from one pinned base image', () => {
    expect(stages.map((s) => s.name)).toEqual(['deps', 'build', undefined]);
    for (const s of stages) {
      expect(s.image).toMatch(/^node:\d+\.\d+\.\d+-bookworm-slim$/);
      expect(s.image).toBe(stages[0]!.image);
    }
    // The engines range of package.json admits the image's Node.
    const major = Number(/^node:(\d+)/.exec(runtime.image)![1]);
    expect(major).toBe(Number(/>=(\d+)/.exec(JSON.parse(read('package.json')).engines.node)![1]));
  });

  it('copies only files that exist in the repository and that .dockerignore lets into the context', () => {
    const sources = stages.flatMap((s) =>
      all(s, 'COPY')
        .filter((c) => !c.flags.from)
        .flatMap((c) => copyPaths(c).sources),
    );
    expect(sources.length).toBeGreaterThan(8);
    for (const src of sources) {
      expect(fs.existsSync(path.join(root, src)), `${src} exists`).toBe(true);
      expect(ignored(src), `${src} is excluded by .dockerignore`).toBe(false);
    }
    // And what must stay out does.
    for (const secret of ['.env', '.git/config', 'node_modules/x', '.data/admin-token', 'dist/src/start.js'])
      expect(ignored(secret), secret).toBe(true);
  });

  it('installs production dependencies only into the runtime image', () => {
    expect(
      all(stage('deps'), 'RUN')
        .map((r) => r.args)
        .join(' '),
    ).toMatch(/npm ci --omit=dev\b/);
    const modules = all(runtime, 'COPY').filter((c) => copyPaths(c).dest.replace(/\/$/, '').endsWith('node_modules'));
    expect(modules.map((c) => [c.flags.from, copyPaths(c).sources[0]])).toEqual([['deps', '/app/node_modules']]);
    // The runtime stage installs nothing itself.
    expect(
      all(runtime, 'RUN')
        .map((r) => r.args)
        .join(' '),
    ).not.toMatch(/npm (ci|install)/);
  });

  it('has every package that the service, the workflows and the CLI import at run time among the production dependencies', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const files = ['src', 'workflows', 'cli', 'bin'].flatMap((dir) =>
      (fs.readdirSync(path.join(root, dir), { recursive: true }) as string[])
        .filter((f) => /\.(ts|js)$/.test(f))
        .map((f) => path.join(dir, f)),
    );
    const used = new Set<string>();
    for (const f of files.filter((f) => !f.startsWith('src/console/static'))) {
      const text = read(f);
      // Value imports only: `import type` and `import { type X }`-only lines are erased by tsc. No `;` between the
      // keyword and `from`: a declaration (`export interface X { a: number; }`) is not an import clause.
      for (const m of text.matchAll(
        /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"./][^'"]*)['"]/gm,
      ))
        used.add(m[1]!);
      for (const m of text.matchAll(/\bimport\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g)) used.add(m[1]!);
    }
    const packageOf = (spec: string) =>
      spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
    const external = [...used].filter((s) => !builtins.has(s) && !builtins.has(s.split('/')[0]!)).map(packageOf);
    expect(external).toEqual(expect.arrayContaining(['@oclif/core', 'tsx', '@temporalio/worker', 'fastify']));
    for (const name of new Set(external))
      expect(Object.keys(pkg.dependencies), `${name} must be a production dependency`).toContain(name);
  });

  it('has the compiled service, workflows, workflow bundle and CLI, laid out as the repository', () => {
    const fromBuild = all(runtime, 'COPY')
      .filter((c) => c.flags.from === 'build')
      .map((c) => [copyPaths(c).sources[0], inImage(copyPaths(c).dest)]);
    expect(fromBuild).toEqual([
      ['/app/dist/src', '/app/src'],
      ['/app/dist/workflows', '/app/workflows'],
      ['/app/dist/cli', '/app/cli'],
      ['/app/dist/workflow-bundle.js', '/app/workflow-bundle.js'],
    ]);
    // Those are what `npm run build` makes: tsc into dist/ from exactly these roots, then the bundle.
    const tsconfig = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    expect(JSON.parse(read('tsconfig.json')).compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
    expect(tsconfig.include.sort()).toEqual(['cli', 'src', 'workflows']);
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json && tsx src/temporal/build-workflow-bundle.ts');
    expect(read('src/temporal/build-workflow-bundle.ts')).toContain("process.argv[2] ?? 'dist/workflow-bundle.js'");
    expect(all(stage('build'), 'RUN').at(-1)!.args).toBe('npm run build');
    // The build stage has the sources tsc needs.
    const buildSources = all(stage('build'), 'COPY').flatMap((c) => copyPaths(c).sources);
    for (const needed of ['tsconfig.json', 'tsconfig.build.json', ...tsconfig.include])
      expect(buildSources).toContain(needed);
  });

  it('points MAILER_WORKFLOW_BUNDLE at the bundle, and sets only declared settings', () => {
    const env = Object.fromEntries(
      all(runtime, 'ENV').flatMap((e) => [...e.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!])),
    );
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      HOST: '0.0.0.0',
      MAILER_WORKFLOW_BUNDLE: '/app/workflow-bundle.js',
      MAILER_DATA_DIR: '/data',
    });
    const declared = new Set(describeConfig().map((s) => s.env));
    for (const key of Object.keys(env).filter((k) => k !== 'NODE_ENV')) expect(declared, key).toContain(key);
    for (const port of ['8080', '8081', '8082', '2526', '2587'])
      expect(all(runtime, 'EXPOSE')[0]!.args.split(/\s+/)).toContain(port);
  });

  it('carries the CLI: `mailer` on PATH runs bin/run.js, which finds the compiled commands', () => {
    expect(pkg.bin.mailer).toBe('./bin/run.js');
    expect(
      all(runtime, 'COPY').some((c) => copyPaths(c).sources[0] === 'bin' && inImage(copyPaths(c).dest) === '/app/bin'),
    ).toBe(true);
    expect(all(runtime, 'COPY').some((c) => copyPaths(c).sources[0] === 'package.json')).toBe(true);
    expect(
      all(runtime, 'RUN')
        .map((r) => r.args)
        .join(' '),
    ).toContain('ln -s /app/bin/run.js /usr/local/bin/mailer');
    expect(fs.statSync(path.join(root, 'bin/run.js')).mode & 0o111).not.toBe(0);
    expect(read('bin/run.js').split('\n')[0]).toBe('#!/usr/bin/env node');
    // oclif's commands directory (package.json) is where the compiled CLI lands.
    expect(inImage(pkg.oclif.commands)).toBe('/app/cli/commands');
  });

  it('runs as a non-root user that owns the data directory', () => {
    const users = all(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.args;
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.instructions.at(-1)!.keyword).not.toBe('USER');
    expect(runtime.instructions.findIndex((i) => i.keyword === 'USER')).toBeGreaterThan(
      runtime.instructions.findLastIndex((i) => i.keyword === 'RUN'),
    );
    expect(
      all(runtime, 'RUN')
        .map((r) => r.args)
        .join(' '),
    ).toContain(`chown ${user}:${user} /data`);
  });

  it('starts the compiled src/start.ts and checks /readyz with a script it copies', () => {
    const cmd = execForm(all(runtime, 'CMD').at(-1)!.args);
    expect(cmd).toEqual(['node', 'src/start.js']);
    expect(fs.existsSync(path.join(root, 'src/start.ts'))).toBe(true);
    expect(all(runtime, 'ENTRYPOINT')).toEqual([]);
    const health = all(runtime, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    const check = execForm(health[0]!.args);
    expect(check.slice(0, 2)).toEqual(['node', '/app/docker/healthcheck.js']);
    const copied = all(runtime, 'COPY').map((c) => [copyPaths(c).sources[0], inImage(copyPaths(c).dest)]);
    expect(copied).toContainEqual(['docker/healthcheck.js', '/app/docker/healthcheck.js']);
    // The script gives up before Docker's timeout does, so a hung probe reports why.
    expect(health[0]!.flags.timeout).toBe('3s');
    expect(read('docker/healthcheck.js')).toContain('AbortSignal.timeout(2500)');
  });
});
