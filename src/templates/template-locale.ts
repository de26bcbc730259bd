/**
 * Which localization a requested locale reads (CONTRACT.md "Templates": `de-AT` → `de` → the template's own
 * fields, each field on its own). Language tags compare without regard to case, as BCP 47 says they do
 * (`de-at` finds a localization stored as `de-AT`). A longer tag falls back one subtag at a time, as RFC 4647's
 * "lookup" does (`zh-Hant-TW` → `zh-Hant` → `zh`; a single-letter extension marker is dropped with what it
 * introduced, so `de-x-formal` → `de`), which for a two-part tag is exactly the contract's `de-AT` → `de`.
 */

/** The tags to look up for `requested`, most specific first, lower-cased: `de-AT` → ['de-at', 'de']. */
export function localeLookupChain(requested: string): string[] {
  const chain: string[] = [];
  const subtags = requested.trim().toLowerCase().split('-');
  while (subtags.length > 0 && subtags[0] !== '') {
    chain.push(subtags.join('-'));
    subtags.pop();
    // A singleton (`x`, `u`, ...) only introduces what follows it: never look it up alone.
    while (subtags.length > 1 && subtags[subtags.length - 1]?.length === 1) subtags.pop();
  }
  return chain;
}

/**
 * The localization `requested` reads for one field: the first tag of its lookup chain whose localization gives
 * that field. `byTag` is keyed by lower-cased tag.
 */
export function pickLocalization<T>(
  byTag: ReadonlyMap<string, T>,
  chain: readonly string[],
  has: (localization: T) => boolean,
): T | undefined {
  for (const tag of chain) {
    const l = byTag.get(tag);
    if (l !== undefined && has(l)) return l;
  }
  return undefined;
}
