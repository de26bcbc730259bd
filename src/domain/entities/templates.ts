import type { JsonValue, WireJsonObject } from '../json.js';

/** A variable a template declares: a missing required one refuses the send, unless it has a default. */
export interface TemplateVariable {
  name: string;
  required: boolean;
  /** Used when a send does not give the variable; absent when none was declared (null is a declared default). */
  default?: JsonValue;
}

/** One locale's overrides; each field falls back on its own (CONTRACT.md: `de-AT` -> `de` -> the template's own). */
export interface TemplateLocalization {
  subject?: string;
  html?: string;
  text?: string;
}

export type TemplateLocalizations = Record<string, TemplateLocalization>;

/** What one version holds: everything a send renders. */
export interface TemplateContent {
  subject: string;
  html: string;
  text: string;
  variables: TemplateVariable[];
  localizations: TemplateLocalizations;
}

/** A template's own row: what is not versioned. */
export interface TemplateRow {
  id: string;
  accountId: string;
  name: string;
  alias: string | null;
  latestVersion: number;
  publishedVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A template as the API shows it: its row with the content of one version (`version`; the latest unless a
 * version was asked for, or the published one for a send).
 */
export interface Template extends TemplateRow, TemplateContent {
  version: number;
  versionCreatedAt: Date;
}

/**
 * A template in a list: its row and the latest version's subject, without bodies, variables or localizations
 * (a page of 100 templates with 5 MB bodies in several languages would weigh gigabytes).
 */
export interface TemplateSummary extends TemplateRow {
  subject: string;
}

/** What create and edit store, validated (domain/template-fields.ts). */
export interface TemplateDraft {
  name: string;
  alias: string | null;
  content: TemplateContent;
}

/**
 * What a send names instead of its own subject, html and text (the proto's TemplateRef, kept equal to it by
 * test/unit/email-draft-fields.test.ts): a template by id or alias, the variables to render it with, a locale,
 * and a version (0: the published one).
 */
export interface TemplateRefInput {
  id: string;
  variables?: WireJsonObject | undefined;
  locale: string;
  version: number;
}

/** The template a stored email was rendered from (`template` of GET /emails/:id). */
export interface TemplateStamp {
  /** The template's id, even when the send named its alias. */
  id: string;
  version: number;
  /** The locale the send asked for; '' when none. */
  locale: string;
}
