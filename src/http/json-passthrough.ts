import type { DescField, DescMessage } from '@bufbuild/protobuf';

/**
 * google.protobuf.Struct fields (a send's `template.variables`) passed from the parsed body to the decoded
 * message as they are. The generated message holds such a field as the plain JSON object it stands for; read
 * through `fromJson`, the object is first built into Struct and Value messages, one per value, and then turned
 * back into the same JSON: two walks and an object per value for nothing, on every templated send (issue 24
 * allows a template send 10 % more CPU than a plain one). JSON.parse made the object already, and every JSON
 * object is a valid Struct, so it is taken off the input before `fromJson` and set on the message after.
 * Anything else (an array, a string, null), and an object nested deeper than PASSED_DEPTH, stays in the input for
 * `fromJson` to judge as before: its recursion limit (100 message levels, two per JSON level inside a Struct) is
 * what keeps a body of 100,000 nested arrays from reaching code that would recurse through them.
 */

/** JSON levels a Struct passed through may hold: well inside what `fromJson` accepts from a send or a batch item. */
export const PASSED_DEPTH = 32;

/** Whether `value` nests at most `levels` JSON levels deep (a scalar is 0); stops as soon as it is deeper. */
function nestsWithin(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (levels === 0) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!nestsWithin(item, levels - 1)) return false;
    return true;
  }
  for (const key in value) if (!nestsWithin((value as JsonObject)[key], levels - 1)) return false;
  return true;
}

const STRUCT = 'google.protobuf.Struct';

/** A field on the way to a Struct field: a Struct itself, or a message (or list of them) holding some. */
interface Site {
  field: DescField;
  list: boolean;
  /** Sites inside the field's message; undefined when the field is the Struct. */
  inner: Site[] | undefined;
}

const sitesBySchema = new WeakMap<DescMessage, Site[]>();

/** The Struct fields reachable from `schema` through singular and repeated message fields (not maps). */
function sitesOf(schema: DescMessage, seen: ReadonlySet<DescMessage> = new Set()): Site[] {
  const cached = sitesBySchema.get(schema);
  if (cached !== undefined) return cached;
  const sites: Site[] = [];
  const inside = new Set(seen).add(schema);
  for (const field of schema.fields) {
    const kind = field.fieldKind;
    // A oneof member sits in the message as {case, value}: not a path this follows.
    if ((kind !== 'message' && kind !== 'list') || field.message === undefined || field.oneof) continue;
    const list = kind === 'list';
    if (field.message.typeName === STRUCT) {
      if (!list) sites.push({ field, list, inner: undefined });
    } else if (!inside.has(field.message)) {
      const inner = sitesOf(field.message, inside);
      if (inner.length > 0) sites.push({ field, list, inner });
    }
  }
  if (seen.size === 0) sitesBySchema.set(schema, sites);
  return sites;
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One Struct taken off: where it goes in the decoded message (local names and list indexes), and its value. */
interface Detached {
  path: (string | number)[];
  value: JsonObject;
}

/** The JSON name the input uses for `field` (fromJson takes either), or undefined when absent or given twice. */
function nameIn(input: JsonObject, field: DescField): string | undefined {
  const json = Object.prototype.hasOwnProperty.call(input, field.jsonName);
  const proto = field.name !== field.jsonName && Object.prototype.hasOwnProperty.call(input, field.name);
  if (json === proto) return undefined;
  return json ? field.jsonName : field.name;
}

/** `input` with its Struct objects taken off (copying only what lies on their paths) into `out`. */
function detach(sites: Site[], input: JsonObject, path: (string | number)[], out: Detached[]): JsonObject {
  let copy: JsonObject | undefined;
  for (const site of sites) {
    const name = nameIn(input, site.field);
    if (name === undefined) continue;
    const value = input[name];
    const at = [...path, site.field.localName];
    let replaced: unknown;
    if (site.inner === undefined) {
      if (!isObject(value) || !nestsWithin(value, PASSED_DEPTH)) continue;
      out.push({ path: at, value });
      replaced = undefined;
    } else if (site.list) {
      if (!Array.isArray(value)) continue;
      const inner = site.inner;
      replaced = value.map((item: unknown, i) => (isObject(item) ? detach(inner, item, [...at, i], out) : item));
    } else if (isObject(value)) {
      replaced = detach(site.inner, value, at, out);
    } else continue;
    copy ??= { ...input };
    if (replaced === undefined) delete copy[name];
    else copy[name] = replaced;
  }
  return copy ?? input;
}

/**
 * Splits `input` (the JSON of a `schema` message) into what `fromJson` should read and the Struct objects to set
 * on its result with `restore`. The input itself is not changed.
 */
export function passStructsThrough(
  schema: DescMessage,
  input: JsonObject,
): { input: JsonObject; restore: (message: object) => void } {
  const sites = sitesOf(schema);
  if (sites.length === 0) return { input, restore: () => {} };
  const detached: Detached[] = [];
  const rest = detach(sites, input, [], detached);
  return {
    input: rest,
    restore: (message) => {
      for (const { path, value } of detached) {
        let target = message as Record<string | number, unknown>;
        for (let i = 0; i < path.length - 1; i++) target = target[path[i]!] as Record<string | number, unknown>;
        target[path[path.length - 1]!] = value;
      }
    },
  };
}
