#!/usr/bin/env node
// The `mailer` operator CLI (oclif). Its commands are TypeScript under cli/commands, run through tsx's
// ESM loader, so `npx mailer` works in a fresh clone without a build step.
import { register } from 'tsx/esm/api';

register();
const { execute, settings } = await import('@oclif/core');
// tsx is already registered and the commands are found where package.json's "oclif" section says:
// oclif must not remap them through tsconfig's outDir (it would under NODE_ENV=development or test).
settings.enableAutoTranspile = false;
await execute({ dir: import.meta.url });
