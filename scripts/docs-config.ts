// npm run docs:config: rewrites the README's configuration table from src/config.ts, the one place settings are declared.
import fs from 'node:fs';
import path from 'node:path';
import { withConfigTable } from './config-table.js';

const readme = path.resolve(import.meta.dirname, '../README.md');
fs.writeFileSync(readme, withConfigTable(fs.readFileSync(readme, 'utf8')));
