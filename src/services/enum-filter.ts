import { isOneOf } from '../domain/catalog.js';
import { invalid } from '../errors.js';

/**
 * A list's optional filter on a fixed vocabulary: '' is no filter; any other value must be one of
 * `allowed`, else a validation error that names them (the spec's wording for every list).
 */
export function enumFilter<T extends string>(field: string, allowed: readonly T[], value: string): T | undefined {
  if (value === '') return undefined;
  if (!isOneOf(allowed, value)) throw invalid(`${field} must be one of ${allowed.join(', ')}; got "${value}"`);
  return value;
}
