// npm run clients:go: regenerates the Go client into sdk/go/gen (gitignored) from proto/mail/v1 with buf.gen.go.yaml:
// protoc-gen-go and protoc-gen-connect-go, the versions pinned in test/helpers/go-tools.ts (built into the per-user
// cache on first use; Go and the Go module proxy are needed then), put on PATH for buf's local plugins.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { goToolsPath } from '../test/helpers/go-tools.js';

const root = path.resolve(import.meta.dirname, '..');
execFileSync(path.join(root, 'node_modules/.bin/buf'), ['generate', '--template', 'buf.gen.go.yaml'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PATH: [goToolsPath('protoc-gen-go', 'protoc-gen-connect-go'), process.env.PATH].join(path.delimiter),
  },
});
console.log('wrote sdk/go/gen: mail/v1 (package mailv1) and mail/v1/mailv1connect; try: cd sdk/go && go run ./example');
