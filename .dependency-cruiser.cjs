/**
 * The import graph of the service, checked by `npm run lint` (depcruise): no circle between files, and no
 * import that runs up a layer. The layers, bottom first (each may import only its own layer and those below):
 *
 *   kernel    errors.ts, config.ts, ids.ts, cidr.ts, domain/     pure rules and types: no I/O, no driver
 *   support   logger, telemetry/, metrics, net/, secrets/, ...   cross-cutting helpers over the kernel
 *   db        db/                                                SQL, behind db/index.ts
 *   io        delivery/, inbound/, webhooks/                     what leaves and what arrives
 *   local     local/                                             development-only stand-ins (embedded servers)
 *   services  services/                                          the use cases
 *   runners   temporal/, api/                                    Temporal wiring; the handlers over the schema
 *   adapters  http/, rpc/, console/                              REST and gRPC, never each other
 *   app       app/, main.ts, start.ts, worker-child.ts           composition: builds and starts the rest
 *
 * eslint.config.js keeps the finer rules inside a layer (domain/ free of Node I/O, adapters without SQL, the
 * CLI a client of the API only, workflows importing only types).
 */
const layers = [
  ['kernel', '^src/(errors|config|ids|cidr)\\.ts$|^src/domain/'],
  [
    'support',
    '^src/(logger|metrics|group-commit|bytes-in-flight|retry-at-start|private-dir)\\.ts$|^src/(telemetry|metrics|net|secrets|templates)/',
  ],
  ['db', '^src/db/'],
  ['io', '^src/(delivery|inbound|webhooks)/'],
  ['local', '^src/local/'],
  ['services', '^src/services/'],
  ['runners', '^src/(temporal|api)/'],
  ['adapters', '^src/(http|rpc|console)/'],
  ['app', '^src/(app/|main\\.ts$|start\\.ts$|worker-child\\.ts$)'],
];

const upward = layers.slice(0, -1).map(([name, from], i) => ({
  name: `${name}-imports-no-layer-above`,
  severity: 'error',
  comment: `${name} may import only itself and the layers below it (see the top of .dependency-cruiser.cjs)`,
  from: { path: from },
  to: {
    path: layers
      .slice(i + 1)
      .map(([, p]) => `(${p})`)
      .join('|'),
  },
}));

/** Modules of one layer that stay apart from each other. */
const apart = (name, from, to, comment) => ({
  name,
  severity: 'error',
  comment,
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'files import each other only one way',
      from: {},
      to: { circular: true },
    },
    ...upward,
    apart(
      'runners-apart',
      '^src/temporal/',
      '^src/api/',
      'Temporal wiring and the API handlers know nothing of each other',
    ),
    apart(
      'runners-apart-2',
      '^src/api/',
      '^src/temporal/',
      'Temporal wiring and the API handlers know nothing of each other',
    ),
    apart(
      'adapters-apart',
      '^src/http/',
      '^src/rpc/',
      'REST and gRPC are thin adapters over api/ and never import each other',
    ),
    apart(
      'adapters-apart-2',
      '^src/rpc/',
      '^src/http/',
      'REST and gRPC are thin adapters over api/ and never import each other',
    ),
    apart(
      'delivery-stands-alone',
      '^src/delivery/',
      '^src/(inbound|webhooks)/',
      'outbound delivery needs nothing of what arrives or of webhooks',
    ),
    apart(
      'inbound-stands-alone',
      '^src/inbound/',
      '^src/(delivery|webhooks)/',
      'receiving needs nothing of delivery or webhooks',
    ),
    apart(
      'webhooks-use-only-the-outbox',
      '^src/webhooks/',
      '^src/(inbound/|delivery/(?!queue/outbox-loop\\.ts$))',
      'webhook delivery shares only the outbox loop with email delivery',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/gen/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
