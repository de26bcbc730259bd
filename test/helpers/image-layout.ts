import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { copyPaths, parseDockerfile, type Stage } from './dockerfile.js';

/**
 * The Dockerfile's stages carried out in a directory instead of an image, as far as that can be done without
 * Docker: each COPY copies what it says (from the repository, or from the build stage's directory), the build
 * stage's `npm run build` runs for real, and the `npm ci` steps are replaced by a link to the repository's
 * node_modules (installing takes minutes and the network: see the report in the test). The runtime stage's
 * `ln -s` of the CLI onto PATH is made as a link in `<root>/usr/local/bin`.
 */
const repo = path.resolve(import.meta.dirname, '../..');
const WORKDIR = '/app';

export interface Layout {
  /** The runtime stage's /app. */
  app: string;
  /** Where `mailer` is linked, as /usr/local/bin in the image. */
  binDir: string;
  /** The runtime stage's ENV. */
  env: Record<string, string>;
}

/** A destination of `stage` (absolute in the image) as a path under `dir`. */
const under = (dir: string, imagePath: string) =>
  path.join(dir, path.posix.relative(WORKDIR, path.posix.resolve(WORKDIR, imagePath)));

function copy(from: string, sources: string[], dest: string, destDir: string): void {
  for (const src of sources) {
    const target =
      sources.length > 1 || dest.endsWith('/')
        ? path.join(under(destDir, dest), path.basename(src))
        : under(destDir, dest);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.cpSync(path.join(from, src), target, { recursive: true, verbatimSymlinks: true });
  }
}

function runStage(stage: Stage, dir: string, stageDirs: Map<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  fs.mkdirSync(dir, { recursive: true });
  for (const ins of stage.instructions) {
    if (ins.keyword === 'COPY') {
      const { sources, dest } = copyPaths(ins);
      if (ins.flags.from) {
        const fromDir = stageDirs.get(ins.flags.from)!;
        if (sources[0] === '/app/node_modules') fs.symlinkSync(path.join(repo, 'node_modules'), under(dir, dest));
        else
          copy(
            fromDir,
            sources.map((s) => path.posix.relative(WORKDIR, s)),
            dest,
            dir,
          );
      } else {
        copy(repo, sources, dest, dir);
      }
    } else if (ins.keyword === 'RUN' && /^npm ci\b/.test(ins.args)) {
      if (!fs.existsSync(path.join(dir, 'node_modules')))
        fs.symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
    } else if (ins.keyword === 'RUN' && ins.args === 'npm run build') {
      execFileSync('npm', ['run', 'build'], {
        cwd: dir,
        stdio: 'pipe',
        timeout: 600_000,
        env: { ...process.env, NODE_ENV: '' },
      });
    } else if (ins.keyword === 'ENV') {
      for (const m of ins.args.matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
    }
  }
  return env;
}

export function assembleImage(root: string): Layout {
  const { stages } = parseDockerfile(fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8'));
  const stageDirs = new Map<string, string>();
  // The deps stage is the repository's node_modules (linked); the build stage is built for real.
  stageDirs.set('deps', repo);
  const build = stages.find((s) => s.name === 'build')!;
  stageDirs.set('build', path.join(root, 'build'));
  runStage(build, path.join(root, 'build'), stageDirs);

  const app = path.join(root, 'app');
  const runtime = stages.at(-1)!;
  const env = runStage(runtime, app, stageDirs);
  const binDir = path.join(root, 'usr/local/bin');
  fs.mkdirSync(binDir, { recursive: true });
  const link = runtime.instructions.map((i) => /ln -s (\S+) \/usr\/local\/bin\/(\S+)/.exec(i.args)).find((m) => m);
  if (!link) throw new Error('the runtime stage links nothing onto PATH');
  fs.symlinkSync(under(app, link[1]!), path.join(binDir, link[2]!));
  return { app, binDir, env };
}
