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

/**
 * Where a string sits in the request, as the spec's JSON names it, or null while only checking: almost every
 * request passes, so the walk first runs without building a path per field, item and key, and only a failure
 * runs it again with paths to name the field.
 */
type Path = string | null;
const UNNAMED = Symbol('a string PostgreSQL cannot store, not yet named');
const at = (path: Path, segment: string): Path => (path === null ? null : `${path}${segment}`);
/** A map key as it appears in a field path: plain when it is a simple name, JSON-quoted otherwise. */
const keyPath = (path: Path, key: string): Path =>
  path === null ? null : /^[\w.-]+$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

function checkString(path: Path, value: string): void {
  const nul = value.includes(NUL);
  if (!nul && !LONE_SURROGATE.test(value)) return;
  if (path === null) throw UNNAMED;
  if (nul) throw invalid(`${path}: must not contain NUL characters (\\u0000)`);
  throw invalid(`${path}: must be valid Unicode text (it holds an unpaired surrogate)`);
}

/** google.protobuf.Struct and Value arrive as plain JSON values. */
function checkJson(path: Path, value: unknown): void {
  if (typeof value === 'string') checkString(path, value);
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) checkJson(at(path, `[${i}]`), value[i]);
  else if (value !== null && typeof value === 'object') {
    for (const k in value) {
      if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
      checkString(at(path, ' key'), k);
      checkJson(keyPath(path, k), (value as Record<string, unknown>)[k]);
    }
  }
}

const JSON_TYPES = new Set(['google.protobuf.Struct', 'google.protobuf.Value', 'google.protobuf.ListValue']);

function checkSingular(path: Path, field: DescField, value: unknown): void {
  if (typeof value === 'string') checkString(path, value);
  else if (field.message && value !== undefined && value !== null) {
    if (JSON_TYPES.has(field.message.typeName)) checkJson(path, value);
    else checkMessage(field.message, value as Record<string, unknown>, at(path, '.'));
  }
}

function checkMessage(schema: DescMessage, message: Record<string, unknown>, prefix: Path): void {
  for (const field of schema.fields) {
    const value = message[field.localName];
    if (value === undefined || value === null) continue;
    const path = at(prefix, field.name);
    switch (field.fieldKind) {
      case 'scalar':
      case 'message':
        checkSingular(path, field, value);
        break;
      case 'list': {
        const items = value as unknown[];
        for (let i = 0; i < items.length; i++) checkSingular(at(path, `[${i}]`), field, items[i]);
        break;
      }
      case 'map':
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          checkString(at(path, ' key'), key);
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
    if (field) checkSingular(at(prefix, field.name), field, selected?.value);
  }
}

/** Checks `message` of type `schema`; throws a 400 naming the first string PostgreSQL could not store. */
export function assertStorableStrings(schema: DescMessage, message: object): void {
  try {
    checkMessage(schema, message as Record<string, unknown>, null);
  } catch (err) {
    if (err !== UNNAMED) throw err;
    checkMessage(schema, message as Record<string, unknown>, '');
  }
}

type Handler = (req: never, ctx: never) => unknown;

/** The handlers of `service`, each checking its request's strings before it runs. */
export function withStorableStrings<T extends Record<string, Handler>>(service: DescService, handlers: T): T {
  const wrapped: Record<string, Handler> = {};
  for (const method of service.methods) {
    const handler = handlers[method.localName];
    if (!handler) continue;
    // A server-streaming handler answers an async iterable, not a promise: it stays one, checked on the first read.
    wrapped[method.localName] = (
      method.methodKind === 'server_streaming'
        ? async function* (req: object, ctx: never) {
            assertStorableStrings(method.input, req);
            yield* handler(req as never, ctx) as AsyncIterable<unknown>;
          }
        : async (req: object, ctx: never) => {
            assertStorableStrings(method.input, req);
            return handler(req as never, ctx);
          }
    ) as Handler;
  }
  return { ...handlers, ...wrapped } as T;
}
