import { compileTemplate, type CompiledTemplate, type TemplateSource } from './template-engine.js';

/**
 * Compiled templates by version (issue 24: "compiled once per version and cached"): least recently used first
 * out, bounded in entries and in the source characters they hold (a compiled template weighs a few times its
 * source, and a version may hold 20 MB of it). The key is the caller's and must name an immutable version, such
 * as `<template id>@<version>`: a stored version never changes, so an entry never goes stale.
 */

export const TEMPLATE_CACHE_DEFAULTS = { maxEntries: 1000, maxSourceChars: 32 * 1024 * 1024 } as const;

export class CompiledTemplateCache {
  private readonly entries = new Map<string, CompiledTemplate>();
  private chars = 0;

  constructor(
    readonly maxEntries: number = TEMPLATE_CACHE_DEFAULTS.maxEntries,
    readonly maxSourceChars: number = TEMPLATE_CACHE_DEFAULTS.maxSourceChars,
  ) {}

  /** The compiled version under `key`, if cached (and now the most recently used). */
  get(key: string): CompiledTemplate | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /**
   * The compiled version under `key`, compiled from `source` when not cached. A version that does not compile
   * throws (a 400) and is not cached; one larger than the whole cache is compiled and returned, not kept.
   */
  compile(key: string, source: TemplateSource | (() => TemplateSource)): CompiledTemplate {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const compiled = compileTemplate(typeof source === 'function' ? source() : source);
    if (compiled.sourceChars <= this.maxSourceChars && this.maxEntries > 0) {
      this.entries.set(key, compiled);
      this.chars += compiled.sourceChars;
      this.evict();
    }
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxSourceChars) return;
      this.entries.delete(key);
      this.chars -= entry.sourceChars;
    }
  }
}
