import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The web console: static HTML, CSS and ES modules under `/console`, which talk to the management API (the
 * operator, signed in with the admin token) or the public API (an account, signed in with its API key) with the
 * session cookie of console-session-routes.ts. Nothing is built or fetched from elsewhere.
 */

export const CONSOLE_PATH = '/console';

/**
 * Scripts only from this origin (no inline script anywhere), nothing from any other host, and never framed.
 * Inline styles are allowed because caught and sent HTML mail is shown in a `sandbox=""` srcdoc frame, which
 * inherits this policy: mail without its own styles would be unreadable. The console itself sets none.
 * Images are limited to this origin and data: URLs, so remote images (and tracking pixels) in mail never load.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface ConsoleOptions {
  /** The service's external URL, shown in the usage example of a new API key. */
  publicUrl: string;
  /** Where the static files are; found next to this module (or in src/ when run from dist/) by default. */
  staticDir?: string;
}

/** The Fastify plugin that serves the console (pass it in `buildRestApp`'s `plugins`). */
export function consolePlugin(options: ConsoleOptions): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    const files = loadStaticFiles(options.staticDir ?? locateStaticDir(), options.publicUrl);
    const index = files.get('index.html');
    if (!index) throw new Error('the console has no index.html');

    app.get(CONSOLE_PATH, (request, reply) => sendFile(request, reply, index));
    app.get(`${CONSOLE_PATH}/*`, (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      const file = name === '' ? index : files.get(name);
      if (!file) return reply.callNotFound();
      return sendFile(request, reply, file);
    });
  };
}

/**
 * The static folder: beside this module when run from src/ (tsx, tests), else src/console/static of the
 * checkout when run from dist/ (tsc does not copy non-TypeScript files).
 */
export function locateStaticDir(): string {
  const candidates = [
    fileURLToPath(new URL('./static/', import.meta.url)),
    fileURLToPath(new URL('../../../src/console/static/', import.meta.url)),
  ];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'index.html')));
  if (!found) throw new Error(`the console's static files are missing (looked in ${candidates.join(' and ')})`);
  return found;
}

/**
 * Every servable file, read once at start. The map is the allow-list: a request names a key or gets 404,
 * so no path from a URL ever reaches the file system.
 */
function loadStaticFiles(dir: string, publicUrl: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const contentType = CONTENT_TYPES[path.extname(entry.name)];
    if (!contentType) continue;
    const full = path.join(entry.parentPath, entry.name);
    const name = path.relative(dir, full).split(path.sep).join('/');
    let body = fs.readFileSync(full);
    if (name === 'index.html')
      body = Buffer.from(body.toString('utf8').replace('{{PUBLIC_URL}}', escapeAttribute(publicUrl)));
    const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    files.set(name, { body, contentType, etag });
  }
  return files;
}

/**
 * The files are not fingerprinted, so browsers revalidate every time (`no-cache`); the ETag turns that
 * into a 304 without a body.
 */
function sendFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  void reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').header('etag', file.etag);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.type(file.contentType).send(file.body);
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
