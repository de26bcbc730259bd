/** Clock helpers the integration tests share. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An ISO timestamp `ms` from now (negative: in the past). */
export const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** When the daily quota counted on `d` resets: the next midnight UTC. */
export const nextUtcMidnight = (d: Date) =>
  new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();

/** A timestamp as the API writes it: ISO 8601, UTC, milliseconds. */
export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
