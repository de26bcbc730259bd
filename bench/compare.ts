import { readFileSync } from 'node:fs';
import path from 'node:path';
import { compareRuns, type RunFile } from './lib/compare-runs.js';

/**
 * `npm run bench:compare -- bench/results/a.json bench/results/b.json ...`: per target, each run's figure and
 * verdict; per baseline, its figure in each run and its spread across them (bench/README.md, "Comparing runs").
 */
const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: npm run bench:compare -- <bench/results/....json> [<more.json> ...]\n');
  process.exit(2);
}
const runs = files.map((file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RunFile;
  } catch (err) {
    process.stderr.write(`bench:compare: cannot read ${file}: ${(err as Error).message}\n`);
    process.exit(2);
  }
});
process.stdout.write(
  `${compareRuns(
    runs,
    files.map((f) => path.basename(f)),
  ).join('\n')}\n`,
);
