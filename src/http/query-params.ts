import type { DescField } from '@bufbuild/protobuf';
import { invalid } from '../errors.js';
import type { RestRoute } from './rest-routes.js';

/** The routes whose request message is read from the query string (and path), not from a body. */
export const readsQuery = (route: RestRoute): boolean => route.method === 'GET' || route.method === 'DELETE';

/**
 * The query parameters a route takes: the top-level fields of its request message that its path does not fill,
 * by their proto names. The OpenAPI document declares exactly these (openapi.ts) and the gateway takes exactly
 * these, so the two cannot disagree. The proto3 JSON spelling (`pageSize`) is not taken: it was never
 * documented, and a name taken in two spellings is a name a client can give twice.
 */
export function queryFields(route: RestRoute): DescField[] {
  if (!readsQuery(route)) return [];
  const fromPath = new Set([route.idField, ...Object.values(route.params ?? {})]);
  return route.rpc.input.fields.filter((f) => !fromPath.has(f.name));
}

const byRoute = new WeakMap<RestRoute, ReadonlySet<string>>();

/**
 * Refuses a query parameter the route does not take, naming it (CONTRACT.md "Stats and timelines": an unknown
 * query parameter on any GET is a 400): a misspelt filter (`stauts=bounced`) would otherwise be dropped and the
 * whole list answered as if it had been asked for, and a misspelt `scope` of a DELETE would remove more than
 * was meant. The names are held per route once, so each request costs a set lookup per parameter.
 */
export function assertKnownQuery(route: RestRoute, query: Record<string, unknown>): void {
  let known = byRoute.get(route);
  if (known === undefined) {
    known = new Set(queryFields(route).map((f) => f.name));
    byRoute.set(route, known);
  }
  const unknown = Object.keys(query).filter((name) => !known.has(name));
  if (unknown.length === 0) return;
  // A name of plain characters as it is; any other quoted, so that an empty or odd one is still seen.
  const names = unknown.map((n) => (/^[\w.[\]-]{1,100}$/.test(n) ? n : JSON.stringify(n.slice(0, 100)))).join(', ');
  const takes = known.size === 0 ? 'it takes none' : `it takes ${[...known].join(', ')}`;
  throw invalid(`unknown query parameter${unknown.length > 1 ? 's' : ''} ${names}: ${takes}`);
}
