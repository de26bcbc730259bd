// Lint rules that keep the layering true (docs/architecture.md, .dependency-cruiser.cjs): who may import whom.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'process',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'worker_threads',
  'zlib',
];
const builtinPatterns = [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`)];

/** A no-restricted-imports rule from a list of {group, message} or {regex, message}. */
const restrict = (...patterns) => ['error', { patterns }];

/**
 * The layers of .dependency-cruiser.cjs (which checks the whole graph) as import specifiers: a module's folder
 * or root file reached by any number of `../`. `above(layer)` bans every module of a higher layer.
 */
const LAYERS = [
  ['kernel', ['domain', 'errors', 'config', 'ids', 'cidr']],
  [
    'support',
    [
      'telemetry',
      'metrics',
      'net',
      'secrets',
      'logger',
      'group-commit',
      'bytes-in-flight',
      'retry-at-start',
      'private-dir',
      'templates',
    ],
  ],
  ['db', ['db']],
  ['io', ['delivery', 'inbound', 'webhooks']],
  ['local', ['local']],
  ['services', ['services']],
  ['runners', ['temporal', 'api']],
  ['adapters', ['http', 'rpc', 'console']],
  ['app', ['app', 'main', 'start', 'worker-child']],
];
/** `../` (any depth) to a module; from a file at src/'s root, `./` too. */
const moduleRegex = (names, fromRoot = false) =>
  `^(${fromRoot ? '\\./|' : ''}(\\.\\./)+)(${names.join('|')})(/|\\.js$)`;
const above = (layer, message, fromRoot = false) => {
  const i = LAYERS.findIndex(([name]) => name === layer);
  return {
    regex: moduleRegex(
      LAYERS.slice(i + 1).flatMap(([, names]) => names),
      fromRoot,
    ),
    message,
  };
};
/** For the adapters: the layers below services that they must reach only through services/ and api/. */
const below = (message) => ({
  regex: moduleRegex(['db', 'delivery', 'inbound', 'webhooks', 'local', 'temporal']),
  message,
});

/** The config block that keeps `files` from importing the packages `group` and whatever `patterns` name. */
const restrictLayer = (files, group, ...patterns) => ({
  files,
  rules: {
    'no-restricted-imports': restrict(
      { group, message: 'not in this layer (see .dependency-cruiser.cjs).' },
      ...patterns,
    ),
  },
});

/** Packages that do I/O (or are a server): the kernel imports none of them. */
const IO_PACKAGES = [
  'postgres',
  'fastify',
  '@fastify/*',
  '@connectrpc/*',
  '@temporalio/*',
  'smtp-server',
  'mailparser',
  'mailauth',
  'undici',
];

const NO_UNKNOWN_CAST =
  'No `as unknown as` outside tests and src/gen: type the seam (a declared type, a type guard, a narrow wrapper, `satisfies`, a generic) instead of casting through unknown.';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'src/gen/**',
      '.data/**',
      'test-artifacts/**',
      'bench/results/**',
      // The TypeScript SDK's generated types and build output.
      'sdk/typescript/src/gen/**',
      'sdk/typescript/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The dependency-cruiser config is CommonJS, as depcruise loads it.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // The console's browser modules, served as they are (no build step).
    files: ['src/console/static/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        sessionStorage: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
        Node: 'readonly',
      },
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node builtins, no I/O, and from src/ only types.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: builtinPatterns, message: 'Workflow code runs in a sandbox without Node builtins.' },
        {
          group: [
            '@temporalio/client',
            '@temporalio/worker',
            '@temporalio/activity',
            'postgres',
            'nodemailer',
            'fastify',
          ],
          message: 'Workflows do no I/O.',
        },
      ),
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../src/**'], allowTypeImports: true, message: 'Import only types from src/ into workflows.' },
          ],
        },
      ],
    },
  },
  {
    // Validation matches control characters on purpose (header injection, hidden content).
    files: ['src/domain/**/*.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // The kernel (domain/, errors.ts, config.ts): pure rules and types, importing nothing with I/O or above it.
    files: ['src/errors.ts', 'src/config.ts', 'src/ids.ts', 'src/cidr.ts'],
    rules: {
      'no-restricted-imports': restrict(
        {
          group: [...IO_PACKAGES, 'nodemailer'],
          message: 'the kernel imports nothing with I/O.',
        },
        above(
          'kernel',
          'the kernel imports nothing above it: adapters register with it (errors.ts registerUnavailable).',
          true,
        ),
      ),
    },
  },
  {
    // domain/ goes further: no Node I/O module either (crypto's hashes and HMACs are pure).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        { group: builtinPatterns.filter((m) => !m.endsWith('crypto')), message: 'domain/ is pure.' },
        {
          group: IO_PACKAGES,
          message: 'domain/ imports nothing with I/O.',
        },
        { regex: '^nodemailer(?!/lib/addressparser$)', message: 'domain/ imports nothing with I/O.' },
        above('kernel', 'domain/ imports nothing above the kernel.'),
      ),
    },
  },
  // Cross-cutting helpers: over the kernel only.
  restrictLayer(
    ['src/telemetry/**/*.ts', 'src/metrics/**/*.ts', 'src/net/**/*.ts', 'src/secrets/**/*.ts', 'src/templates/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*'],
    above('support', 'support modules import only the kernel and each other.'),
  ),
  restrictLayer(
    [
      'src/logger.ts',
      'src/metrics.ts',
      'src/group-commit.ts',
      'src/bytes-in-flight.ts',
      'src/retry-at-start.ts',
      'src/private-dir.ts',
    ],
    ['fastify', '@fastify/*', '@connectrpc/*'],
    above('support', 'support modules import only the kernel and each other.', true),
  ),
  // Repositories: SQL only, over domain types; nothing above them.
  restrictLayer(
    ['src/db/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*', 'nodemailer', '@temporalio/*'],
    above('db', 'db/ holds SQL only: services call it, it calls nothing above it.'),
  ),
  // What leaves and what arrives: called by services and activities, never by or through the adapters.
  restrictLayer(
    ['src/delivery/**/*.ts', 'src/inbound/**/*.ts', 'src/webhooks/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*'],
    above(
      'io',
      'delivery/, inbound/ and webhooks/ do their I/O for services and activities, and know nothing of them.',
    ),
  ),
  restrictLayer(
    ['src/local/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*'],
    above('local', 'local/ stands in for servers in development; it knows nothing of the service above it.'),
  ),
  // Use cases know nothing of HTTP, gRPC, Temporal or the generated schema.
  restrictLayer(
    ['src/services/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*', '@temporalio/*'],
    above('services', 'services/ never import transports, Temporal wiring or the generated schema.'),
    { regex: '^(\\.\\./)+gen/', message: 'services/ never import the generated schema.' },
  ),
  // Temporal wiring and activities: services, repos and I/O; never the transports.
  restrictLayer(
    ['src/temporal/**/*.ts'],
    ['fastify', '@fastify/*', '@connectrpc/*'],
    above('runners', 'temporal/ never imports the API adapters or the app.'),
    { regex: '^(\\.\\./)+api/', message: 'temporal/ and api/ know nothing of each other.' },
  ),
  // The two adapters stay thin: no SQL, no SMTP, and they never import each other.
  restrictLayer(
    ['src/http/**/*.ts'],
    ['postgres', 'nodemailer'],
    above('adapters', 'http/ is an adapter over api/ and services/.'),
    below('http/ is an adapter over api/ and services/: no SQL, no SMTP, no workflows.'),
    { regex: '^(\\.\\./)+rpc/', message: 'http/ and rpc/ never import each other.' },
  ),
  restrictLayer(
    ['src/rpc/**/*.ts'],
    ['postgres', 'nodemailer'],
    above('adapters', 'rpc/ is an adapter over api/ and services/.'),
    below('rpc/ is an adapter over api/ and services/: no SQL, no SMTP, no workflows.'),
    { regex: '^(\\.\\./)+http/', message: 'http/ and rpc/ never import each other.' },
  ),
  {
    // Only config.ts reads the environment; process entry points hand it over.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/start.ts', 'src/worker-child.ts', 'src/local/install-temporal-cli.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config.ts reads the environment.' },
      ],
    },
  },
  {
    // The shared handlers: use cases and presenters over the schema; no SQL, SMTP or transport of their own.
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        {
          group: ['postgres', 'nodemailer', 'fastify', '@temporalio/*'],
          message: 'api/ is the handler set over services/; adapters call it.',
        },
        above('runners', 'api/ is the handler set over services/; adapters call it.'),
        {
          regex: '^(\\.\\./)+(temporal|delivery|inbound|webhooks|local)/',
          message: 'api/ reaches delivery, Temporal and I/O through services/ only.',
        },
      ),
      // Presenters read the rows services return: their types, never the repositories themselves.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+db/',
              allowTypeImports: true,
              message: 'api/ reaches the database through services/ only.',
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI is a client of the Connect API like any other: the generated schema, never the server's code.
    files: ['cli/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src/(?!gen/)',
              allowTypeImports: true,
              message: 'cli/ reaches the service through its API; only src/gen (and types) may be imported.',
            },
          ],
        },
      ],
    },
  },
  {
    // Types at every seam: a cast through `unknown` hides a seam whose types disagree. Tests may still build
    // partial fakes so; generated code is not ours.
    files: ['src/**/*.ts', 'cli/**/*.ts', 'workflows/**/*.ts', 'bench/**/*.ts', 'sdk/typescript/src/**/*.ts'],
    ignores: ['src/gen/**', 'sdk/typescript/src/gen/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression > TSAsExpression.expression[typeAnnotation.type='TSUnknownKeyword']",
          message: NO_UNKNOWN_CAST,
        },
        {
          selector: "TSTypeAssertion > TSTypeAssertion.expression[typeAnnotation.type='TSUnknownKeyword']",
          message: NO_UNKNOWN_CAST,
        },
      ],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or handles is a failure nobody hears of.
    // The SDK's sources are checked under their own tsconfig (sdk/typescript/tsconfig.json), which projectService finds.
    files: [
      'src/**/*.ts',
      'cli/**/*.ts',
      'workflows/**/*.ts',
      'bench/**/*.ts',
      'test/**/*.ts',
      'sdk/typescript/src/**/*.ts',
    ],
    ignores: ['src/gen/**', 'sdk/typescript/src/gen/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
    },
  },
);
