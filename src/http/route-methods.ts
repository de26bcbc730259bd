/**
 * Which methods each registered path answers, so that a known path asked with another method is a 405 naming
 * the allowed ones (RFC 9110 15.5.6) rather than a 404. Paths are Fastify's (`:id` parameters, `*` wildcards).
 */
export function createRouteMethods() {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  const byUrl = new Map<string, Set<string>>();

  const patternOf = (url: string) =>
    new RegExp(
      `^${url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}/?$`,
    );

  return {
    add(method: string | string[], url: string): void {
      let methods = byUrl.get(url);
      if (!methods) {
        methods = new Set();
        byUrl.set(url, methods);
        routes.push({ pattern: patternOf(url), methods });
      }
      for (const m of Array.isArray(method) ? method : [method]) methods.add(m.toUpperCase());
    },

    /** The methods some route answers at `path` (no query string), sorted; empty when no route has the path. */
    allowed(path: string): string[] {
      const all = new Set<string>();
      for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) all.add(m);
      return [...all].sort();
    },
  };
}
