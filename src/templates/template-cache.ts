import { compileTemplate, type CompiledTemplate, type TemplateSource } from './template-engine.js';

/**
 * Compiled templates by version (issue 24: "compiled once per version and cached"): least recently used first
 * out, bounded in entries and in the memory they are estimated to hold. The key is the caller's and must name
 * an immutable version, such as `<template id>@<version>`: a stored version never changes, so an entry never
 * goes stale.
 */

export const TEMPLATE_CACHE_DEFAULTS = { maxEntries: 1000, maxBytes: 128 * 1024 * 1024 } as const;

/**
 * What a compiled version holds, estimated: its sources (UTF-16) and, per tag, its parsed nodes and closures
 * (template-interpreter.ts), counted at the 1.6 KB Handlebars' compiled code was measured at (template-prescan.ts),
 * rounded up: generous, so the cache's bound holds.
 */
export const compiledBytes = (t: CompiledTemplate): number => 2 * t.sourceChars + 2048 * t.tags;

export class CompiledTemplateCache {
  private readonly entries = new Map<string, CompiledTemplate>();
  private bytes = 0;

  constructor(
    readonly maxEntries: number = TEMPLATE_CACHE_DEFAULTS.maxEntries,
    readonly maxBytes: number = TEMPLATE_CACHE_DEFAULTS.maxBytes,
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
    if (compiledBytes(compiled) <= this.maxBytes && this.maxEntries > 0) {
      this.entries.set(key, compiled);
      this.bytes += compiledBytes(compiled);
      this.evict();
    }
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) return;
      this.entries.delete(key);
      this.bytes -= compiledBytes(entry);
    }
  }
}
