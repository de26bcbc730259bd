import fs from 'node:fs';
import path from 'node:path';
import type { Scrape } from './prometheus.js';

export const DASHBOARD_FILE = path.join(import.meta.dirname, '../../deploy/grafana/mailer-dashboard.json');

export interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string; refId: string; legendFormat?: string }[];
  panels?: Panel[];
}
export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: unknown }[] };
}

export function loadDashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel, rows' own included. */
export function panelsOf(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** The PromQL of every query of every panel. */
export function exprsOf(dashboard: Dashboard): string[] {
  return panelsOf(dashboard).flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: its identifiers, once strings, label matchers, ranges and
 * grouping clauses are taken out, that call nothing (functions and aggregations are followed by `(`) and
 * are no keyword. Grafana's $variables are left out with the rest.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?!\w)(\s*\()?/g)) {
    if (m[2] !== undefined || KEYWORDS.has(m[1]!.toLowerCase())) continue;
    names.add(m[1]!);
  }
  return [...names];
}

/** The metric names the dashboard queries, and those among them the scrape has no sample of. */
export function checkDashboard(scrape: Scrape): { used: string[]; missing: string[] } {
  const used = [...new Set(exprsOf(loadDashboard()).flatMap(metricNamesIn))].sort();
  const present = new Set(scrape.samples.map((s) => s.name));
  return { used, missing: used.filter((name) => !present.has(name)) };
}
