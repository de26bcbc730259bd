import fs from 'node:fs/promises';
import path from 'node:path';
import { buildWorkflowBundle } from './worker.js';

/**
 * `npm run build` step: the workflow bundle production workers load (MAILER_WORKFLOW_BUNDLE) instead of
 * bundling workflows/ with webpack at every start.
 */
const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
await fs.mkdir(path.dirname(out), { recursive: true });
await fs.writeFile(out, (await buildWorkflowBundle()).code);
console.log(`workflow bundle written to ${out}`);
