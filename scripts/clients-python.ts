// npm run clients:python [-- <openapi url>]: regenerates the Python clients into sdk/python/gen (gitignored): the
// gRPC stubs (package mail.v1) from proto/mail/v1 and the REST client (package mailer_rest) from the OpenAPI
// document, this checkout's (written by src/http/openapi.ts) unless a running service's URL is given, such as
// http://localhost:8080/v1/mail/openapi.json. The generators are pinned in sdk/python/requirements.txt.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildOpenApi } from '../src/http/openapi.js';
import { generatePythonGrpc, generatePythonRest, pythonVenv } from '../test/helpers/python-venv.js';

const out = path.resolve(import.meta.dirname, '../sdk/python/gen');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clients-python-'));
try {
  let openapi = process.argv[2];
  if (!openapi) {
    openapi = path.join(tmp, 'openapi.json');
    fs.writeFileSync(openapi, JSON.stringify(buildOpenApi('http://localhost:8080')));
  }
  console.log(`python: ${await pythonVenv()}`);
  fs.rmSync(out, { recursive: true, force: true });
  await generatePythonGrpc(out);
  await generatePythonRest(out, openapi);
  console.log(
    `wrote ${path.relative(process.cwd(), out)}: mail/v1 (gRPC) and mailer_rest (REST) from ${process.argv[2] ?? 'src/http/openapi.ts'}`,
  );
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
