import type { DescField, DescMessage, DescService } from '@bufbuild/protobuf';
import { invalid } from '../errors.js';

/**
 * PostgreSQL's `text` and `jsonb` refuse NUL, and a string with an unpaired UTF-16 surrogate has no UTF-8 form
 * (jsonb refuses its escape; `text` would silently store U+FFFD). So no request string may carry either: every
 * string of every request message (fields, list items, map keys and values, nested messages, whatever came
 * from a body, a query parameter or a path) is checked here, once, before any handler runs, and refused with a
 * 400 naming the field as the spec's JSON names it (`emails[3].headers.X-Tag`).
 */

const NUL = '\0';
// A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag: code units).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkString(path: string, value: string): void {
  if (value.includes(NUL)) throw invalid(`${path}: must not contain NUL characters (\\u0000)`);
  if (LONE_SURROGATE.test(value)) throw invalid(`${path}: must be valid Unicode text (it holds an unpaired surrogate)`);
}

/** A map key as it appears in a field path: plain when it is a simple name, JSON-quoted otherwise. */
const keyPath = (path: string, key: string) =>
  /^[\w.-]+$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** google.protobuf.Struct and Value arrive as plain JSON values. */
function checkJson(path: string, value: unknown): void {
  if (typeof value === 'string') checkString(path, value);
  else if (Array.isArray(value)) value.forEach((v, i) => checkJson(`${path}[${i}]`, v));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      checkString(`${path} key`, k);
      checkJson(keyPath(path, k), v);
    }
  }
}

const JSON_TYPES = new Set(['google.protobuf.Struct', 'google.protobuf.Value', 'google.protobuf.ListValue']);

function checkSingular(path: string, field: DescField, value: unknown): void {
  if (typeof value === 'string') checkString(path, value);
  else if (field.message && value !== undefined && value !== null) {
    if (JSON_TYPES.has(field.message.typeName)) checkJson(path, value);
    else checkMessage(field.message, value as Record<string, unknown>, `${path}.`);
  }
}

function checkMessage(schema: DescMessage, message: Record<string, unknown>, prefix = ''): void {
  for (const field of schema.fields) {
    const value = message[field.localName];
    if (value === undefined || value === null) continue;
    const path = `${prefix}${field.name}`;
    switch (field.fieldKind) {
      case 'scalar':
      case 'message':
        checkSingular(path, field, value);
        break;
      case 'list':
        (value as unknown[]).forEach((item, i) => checkSingular(`${path}[${i}]`, field, item));
        break;
      case 'map':
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          checkString(`${path} key`, key);
          checkSingular(keyPath(path, key), field, item);
        }
        break;
      case 'enum':
        break;
    }
  }
  for (const oneof of schema.oneofs) {
    const selected = message[oneof.localName] as { case?: string; value?: unknown } | undefined;
    const field = oneof.fields.find((f) => f.localName === selected?.case);
    if (field) checkSingular(`${prefix}${field.name}`, field, selected?.value);
  }
}

/** Checks `message` of type `schema`; throws a 400 naming the first string PostgreSQL could not store. */
export function assertStorableStrings(schema: DescMessage, message: object): void {
  checkMessage(schema, message as Record<string, unknown>);
}

type Handler = (req: never, ctx: never) => unknown;

/** The handlers of `service`, each checking its request's strings before it runs. */
export function withStorableStrings<T extends Record<string, Handler>>(service: DescService, handlers: T): T {
  const wrapped: Record<string, Handler> = {};
  for (const method of service.methods) {
    const handler = handlers[method.localName];
    if (!handler) continue;
    wrapped[method.localName] = (async (req: object, ctx: never) => {
      assertStorableStrings(method.input, req);
      return handler(req as never, ctx);
    }) as Handler;
  }
  return { ...handlers, ...wrapped } as T;
}
