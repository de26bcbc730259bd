import { invalid } from '../errors.js';
import { LIMITS } from './limits.js';

/** Deeper pages than this are refused: OFFSET makes PostgreSQL walk every skipped row. */
export const MAX_OFFSET = 1_000_000_000;
/** The largest page number valid with every page size (the OpenAPI document's maximum). */
export const PAGE_MAX = MAX_OFFSET / LIMITS.pageSizeMax;

export interface Page {
  limit: number;
  offset: number;
}

/** page and size as the request gave them (0 = not given); 400 when out of range. */
export function toPage(page: number, size: number, sizeField: string): Page {
  if (page < 0) throw invalid(`page must be 1 or more, got ${page}`);
  if (size < 0) throw invalid(`${sizeField} must be from 1 to ${LIMITS.pageSizeMax}, got ${size}`);
  if (size > LIMITS.pageSizeMax) throw invalid(`${sizeField} is ${size}; the maximum is ${LIMITS.pageSizeMax}`);
  const limit = size === 0 ? LIMITS.pageSizeDefault : size;
  const offset = ((page === 0 ? 1 : page) - 1) * limit;
  if (offset > MAX_OFFSET) throw invalid(`page ${page} is too large`);
  return { limit, offset };
}
