// Lint rules that keep the layering of DESIGN.md true: who may import whom.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'process', 'stream', 'timers', 'tls', 'url', 'util',
  'worker_threads', 'zlib',
];
const builtinPatterns = [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`)];

/** A no-restricted-imports rule from a list of {group, message}. */
const restrict = (...patterns) => ['error', { patterns }];

/** The config block that keeps `files` from importing `group`. */
const layer = (files, group, message) => ({ files, rules: { 'no-restricted-imports': restrict({ group, message }) } });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/gen/**', '.data/**', 'test-artifacts/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The console's browser modules, served as they are (no build step).
    files: ['src/console/static/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', location: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', URLSearchParams: 'readonly', Node: 'readonly' },
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node builtins, no I/O, and from src/ only types.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: builtinPatterns, message: 'Workflow code runs in a sandbox without Node builtins.' },
        { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'postgres', 'nodemailer', 'fastify'], message: 'Workflows do no I/O.' },
      ),
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: ['../src/**'], allowTypeImports: true, message: 'Import only types from src/ into workflows.' }],
      }],
    },
  },
  {
    // Validation matches control characters on purpose (header injection, hidden content).
    files: ['src/domain/**/*.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // Pure rules: nothing with I/O.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: builtinPatterns.filter((m) => !m.endsWith('crypto')), message: 'domain/ is pure.' },
        { group: ['postgres', 'fastify', '@connectrpc/*', '@temporalio/*', '../db/*', '../services/*', '../http/*', '../rpc/*', '../api/*', '../gen/*'], message: 'domain/ imports nothing with I/O.' },
        // nodemailer's addressparser is a pure function: the domain reads addresses exactly as nodemailer does.
        { regex: '^nodemailer(?!/lib/addressparser$)', message: 'domain/ imports nothing with I/O.' },
      ),
    },
  },
  // Use cases know nothing of HTTP, gRPC or the generated schema.
  layer(['src/services/**/*.ts'], ['fastify', '@fastify/*', '@connectrpc/*', '../gen/*', '../http/*', '../rpc/*', '../api/*'], 'services/ never import transports or the generated schema.'),
  // The two adapters stay thin: no SQL, no SMTP, and they never import each other.
  layer(['src/http/**/*.ts'], ['postgres', 'nodemailer', '../db/*', '../mail/*', '../rpc/*'], 'http/ is an adapter over api/ and services/.'),
  layer(['src/rpc/**/*.ts'], ['postgres', 'nodemailer', '../db/*', '../mail/*', '../http/*'], 'rpc/ is an adapter over api/ and services/.'),
  {
    // Only config.ts reads the environment; process entry points hand it over.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/start.ts', 'src/worker-child.ts', 'src/local/install-temporal-cli.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only src/config.ts reads the environment.' }],
    },
  },
  {
    // The shared handlers: use cases and presenters over the schema; no SQL, SMTP or transport of their own.
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: ['postgres', 'nodemailer', 'fastify', '../mail/*', '../http/*', '../rpc/*', '../temporal/*'], message: 'api/ is the handler set over services/; adapters call it.' },
      ),
      // Presenters read the rows services return: their types, never the repositories themselves.
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: ['../db/*', '../db/**'], allowTypeImports: true, message: 'api/ reaches the database through services/ only.' }],
      }],
    },
  },
  // Repositories: SQL only, over domain types; nothing above them.
  layer(['src/db/**/*.ts'], ['fastify', '@connectrpc/*', 'nodemailer', '@temporalio/*', '../services/*', '../api/*', '../http/*', '../rpc/*', '../mail/*', '../temporal/*', '../../services/*', '../../api/*', '../../http/*', '../../rpc/*', '../../mail/*', '../../temporal/*'], 'db/ holds SQL only: services call it, it calls nothing above it.'),
  // Mail and webhook I/O: called by activities and services, never by or through the adapters.
  layer(['src/mail/**/*.ts', 'src/webhooks/**/*.ts'], ['fastify', '@connectrpc/*', '../http/*', '../rpc/*', '../api/*', '../services/*', '../temporal/*'], 'mail/ and webhooks/ do their I/O for services and activities, and know nothing of them.'),
  // Temporal wiring and activities: services, repos and mail; never the transports.
  layer(['src/temporal/**/*.ts'], ['fastify', '@connectrpc/*', '../http/*', '../rpc/*', '../api/*'], 'temporal/ never imports the API adapters.'),
  {
    // The CLI is a client of the Connect API like any other: the generated schema, never the server's code.
    files: ['cli/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(\\.\\./)+src/(?!gen/)', allowTypeImports: true, message: 'cli/ reaches the service through its API; only src/gen (and types) may be imported.' }],
      }],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or handles is a failure nobody hears of.
    files: ['src/**/*.ts', 'cli/**/*.ts', 'workflows/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    ignores: ['src/gen/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
    },
  },
);
