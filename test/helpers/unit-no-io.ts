import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The unit project's setup file (vitest.config.ts): a unit test starts no process, opens or listens on no
 * socket, asks no DNS server, writes no file and reads no repository file but its own fixtures (test/fixtures/).
 * Each of those throws here, at the call, naming the rule, so that a test doing I/O fails at once instead of
 * making the first layer slow or flaky; such a test belongs in the integration project (docs/testing.md).
 * Reads elsewhere stay open: the worker itself loads node_modules through `fs`.
 */
export class UnitTestIoError extends Error {
  constructor(call: string) {
    super(
      `unit tests do no I/O: ${call} was called. Fake the dependency at its seam, or move the test to the integration project (docs/testing.md).`,
    );
    this.name = 'UnitTestIoError';
  }
}

const repoRoot = path.resolve(import.meta.dirname, '../..');
const readable = [path.join(repoRoot, 'node_modules') + path.sep, path.join(repoRoot, 'test', 'fixtures') + path.sep];
const GUARDED = Symbol.for('mailer.unit-no-io');

type Fn = (...args: unknown[]) => unknown;
type Target = Record<string | symbol, unknown>;

const show = (v: unknown) =>
  typeof v === 'string'
    ? `'${v.slice(0, 80)}'`
    : v instanceof URL
      ? `'${v.href}'`
      : typeof v === 'number'
        ? String(v)
        : '…';

/** Replaces target[name] by a function that throws (or, for a promise API, rejects) when `refuses` says so. */
function guard(
  target: object,
  label: string,
  name: string,
  refuses: (args: unknown[]) => boolean = () => true,
  promises = false,
): void {
  const t = target as Target;
  const original = t[name];
  if (typeof original !== 'function') return;
  t[name] = function guarded(this: unknown, ...args: unknown[]) {
    if (refuses(args)) {
      const err = new UnitTestIoError(`${label}.${name}(${args.length ? show(args[0]) : ''})`);
      if (promises) return Promise.reject(err);
      throw err;
    }
    return (original as Fn).apply(this, args);
  };
}

function filePath(p: unknown): string | undefined {
  if (typeof p === 'string') return path.resolve(p);
  if (p instanceof URL) return p.protocol === 'file:' ? fileURLToPath(p) : undefined;
  if (Buffer.isBuffer(p)) return path.resolve(p.toString());
  return undefined; // a file descriptor: opened earlier, by a call that was itself checked (or stdout, stderr)
}

/** A repository file a unit test may not read: anything in the checkout but node_modules and test/fixtures. */
function repositoryFile(p: unknown): boolean {
  const file = filePath(p);
  return (
    file !== undefined &&
    (file === repoRoot || file.startsWith(repoRoot + path.sep)) &&
    !readable.some((dir) => file.startsWith(dir))
  );
}

/** An open() that may create or change the file (flags w, a or +, as a string or as O_* bits). */
function opensForWriting(flags: unknown): boolean {
  if (typeof flags === 'string') return /[wa+]/.test(flags);
  if (typeof flags === 'number')
    return (
      (flags &
        (fs.constants.O_WRONLY |
          fs.constants.O_RDWR |
          fs.constants.O_CREAT |
          fs.constants.O_TRUNC |
          fs.constants.O_APPEND)) !==
      0
    );
  return false;
}

const WRITES = [
  'writeFile',
  'appendFile',
  'mkdir',
  'mkdtemp',
  'rm',
  'rmdir',
  'unlink',
  'rename',
  'copyFile',
  'cp',
  'chmod',
  'lchmod',
  'chown',
  'lchown',
  'truncate',
  'symlink',
  'link',
  'utimes',
  'lutimes',
];
const READS = ['readFile', 'readdir', 'opendir'];

function install(): void {
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'])
    guard(childProcess, 'child_process', name);

  // Every TCP and TLS client (http, http2, fetch, SMTP, PostgreSQL) connects through net.Socket, every server listens through net.Server.
  guard(net.Socket.prototype, 'net.Socket', 'connect');
  guard(net.Server.prototype, 'net.Server', 'listen');
  for (const name of ['bind', 'connect', 'send']) guard(dgram.Socket.prototype, 'dgram.Socket', name);

  // A literal address is answered without a query; a name would go to the system's resolver.
  const isName = (args: unknown[]) => typeof args[0] !== 'string' || net.isIP(args[0]) === 0;
  guard(dns, 'dns', 'lookup', isName);
  guard(dns.promises, 'dns.promises', 'lookup', isName, true);
  guard(dns, 'dns', 'lookupService');
  guard(dns.promises, 'dns.promises', 'lookupService', undefined, true);
  const queries = (o: object) => Object.getOwnPropertyNames(o).filter((n) => /^(resolve|reverse)/.test(n));
  for (const name of queries(dns)) guard(dns, 'dns', name);
  for (const name of queries(dns.Resolver.prototype)) guard(dns.Resolver.prototype, 'dns.Resolver', name);
  for (const name of queries(dns.promises)) guard(dns.promises, 'dns.promises', name, undefined, true);
  for (const name of queries(dns.promises.Resolver.prototype))
    guard(dns.promises.Resolver.prototype, 'dns.promises.Resolver', name, undefined, true);

  for (const name of WRITES) {
    guard(fs, 'fs', name);
    guard(fs, 'fs', `${name}Sync`);
    guard(fs.promises, 'fs.promises', name, undefined, true);
  }
  guard(fs, 'fs', 'createWriteStream');
  for (const name of READS) {
    guard(fs, 'fs', name, (args) => repositoryFile(args[0]));
    guard(fs, 'fs', `${name}Sync`, (args) => repositoryFile(args[0]));
    guard(fs.promises, 'fs.promises', name, (args) => repositoryFile(args[0]), true);
  }
  guard(fs, 'fs', 'createReadStream', (args) => repositoryFile(args[0]));
  const opens = (args: unknown[]) => opensForWriting(args[1]) || repositoryFile(args[0]);
  guard(fs, 'fs', 'open', opens);
  guard(fs, 'fs', 'openSync', opens);
  guard(fs.promises, 'fs.promises', 'open', opens, true);

  // `import { spawnSync } from 'node:child_process'` binds the ES module's copy: bring it up to date.
  syncBuiltinESMExports();
}

// A worker that runs several test files (isolate: false) runs this file before each: install once.
const state = globalThis as { [GUARDED]?: boolean };
if (!state[GUARDED]) {
  install();
  state[GUARDED] = true;
}
