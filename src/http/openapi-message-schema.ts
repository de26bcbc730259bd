import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';
import { FIELD_CONSTRAINTS, NO_NUL, type Schema } from './openapi-constraints.js';

/**
 * JSON Schemas of the proto messages for the OpenAPI document (openapi.ts): the descriptors give the
 * shape, openapi-constraints.ts the limits the validation enforces, and this adds what proto3 cannot say.
 */

/** Which side of the wire a message is on: requests carry the input rules, answers say what is always present. */
export type Role = 'request' | 'response';

const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 };
const UINT32_MAX = 4_294_967_295;

/** The fields of a request that must be given: what proto3 cannot say (it has no required). */
const REQUIRED_REQUEST_FIELDS: Record<string, string[]> = {
  SendEmailRequest: ['from', 'to'],
  ScheduleEmailRequest: ['from', 'to', 'scheduled_at'],
  TemplateRefInput: ['id'],
  CreateTemplateRequest: ['name', 'subject'],
  PreviewTemplateRequest: ['subject'],
  TemplateVariableInput: ['name'],
  AttachmentInput: ['filename', 'content'],
  SendBatchRequest: ['emails'],
  CreateAccountRequest: ['name'],
  CreateDomainRequest: ['name'],
  CreateAccountDomainRequest: ['name'],
  CreateApiKeyRequest: ['name', 'permission'],
  CreateAccountApiKeyRequest: ['name', 'permission'],
  CreateWebhookRequest: ['url', 'events'],
  CreateAccountWebhookRequest: ['url', 'events'],
  EraseRecipientRequest: ['address'],
  AddSuppressionRequest: ['email'],
  CreateInboundRouteRequest: ['match'],
  CreateAccountInboundRouteRequest: ['match'],
};

/**
 * Requests that give either their own content (a subject, and html or text) or a template, never both: the one
 * cross-field rule a JSON Schema can state. It is an if/then/else beside the object's properties, not a top-level
 * oneOf: client generators (openapi-python-client, openapi-generator) build a request model from a top-level
 * oneOf's branches alone and drop from, to and every other field, while they ignore if/then/else; validators and
 * the contract fuzzer (schemathesis) honour it.
 */
const CONTENT_OR_TEMPLATE = new Set(['SendEmailRequest', 'ScheduleEmailRequest']);
const contentOrTemplate = {
  description:
    'Give either your own content (`subject`, and `html` or `text`) or a `template` (then no subject, html or text).',
  if: { required: ['template'] },
  then: { properties: { subject: { maxLength: 0 }, html: { maxLength: 0 }, text: { maxLength: 0 } } },
  else: {
    required: ['subject'],
    properties: { subject: { minLength: 1 } },
    anyOf: [
      { required: ['html'], properties: { html: { minLength: 1 } } },
      { required: ['text'], properties: { text: { minLength: 1 } } },
    ],
  },
};

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.STRING:
      return { type: 'string' };
    case ScalarType.BOOL:
      return { type: 'boolean' };
    case ScalarType.BYTES:
      return { type: 'string', contentEncoding: 'base64' };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: 'number' };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: 'integer', format: 'int32', ...INT32 };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: 'integer', format: 'uint32', minimum: 0, maximum: UINT32_MAX };
    default:
      return { type: 'string', format: 'int64' };
  }
}

/** Registers the messages a schema refers to, under a name per role, so the components can be written after. */
export class Components {
  readonly pending = new Map<string, { message: DescMessage; role: Role }>();

  ref(m: DescMessage, role: Role): Schema {
    // google.protobuf.Struct is a free-form JSON object on the wire, not its {fields: ...} message form.
    if (m.typeName === 'google.protobuf.Struct') return { type: 'object', additionalProperties: true };
    // ListValue is a JSON array and Value any JSON value.
    if (m.typeName === 'google.protobuf.ListValue') return { type: 'array' };
    if (m.typeName === 'google.protobuf.Value') return {};
    const name = componentName(m, role);
    if (!this.pending.has(name)) this.pending.set(name, { message: m, role });
    return { $ref: `#/components/schemas/${name}` };
  }
}

/** A request's nested message that is also an answer's (Attachment) gets a name of its own. */
function componentName(m: DescMessage, role: Role): string {
  return role === 'request' && !m.name.endsWith('Request') ? `${m.name}Input` : m.name;
}

function merge(base: Schema, extra: Schema | undefined): Schema {
  if (!extra) return base;
  const out: Schema = { ...base, ...extra };
  for (const key of ['items', 'additionalProperties'] as const) {
    if (typeof base[key] === 'object' && typeof extra[key] === 'object')
      out[key] = { ...(base[key] as Schema), ...(extra[key] as Schema) };
  }
  return out;
}

export function fieldSchema(f: DescField, role: Role, components: Components, extra: Schema | undefined): Schema {
  let schema: Schema;
  switch (f.fieldKind) {
    case 'scalar':
      schema = scalarSchema(f.scalar);
      break;
    case 'enum':
      schema = { type: 'string' };
      break;
    case 'message':
      schema = components.ref(f.message, role);
      break;
    case 'list':
      schema = {
        type: 'array',
        items:
          f.listKind === 'scalar'
            ? scalarSchema(f.scalar)
            : f.listKind === 'message'
              ? components.ref(f.message, role)
              : { type: 'string' },
      };
      break;
    case 'map':
      schema = {
        type: 'object',
        additionalProperties:
          f.mapKind === 'scalar'
            ? scalarSchema(f.scalar)
            : f.mapKind === 'message'
              ? components.ref(f.message, role)
              : { type: 'string' },
      };
      break;
  }
  // A $ref with siblings is fine in 3.1, but nothing constrains a message field beyond its own schema.
  if ('$ref' in schema) return schema;
  const merged = merge(schema, extra);
  return role === 'request' ? refuseNul(merged) : merged;
}

/** A request's free-form strings (no pattern, vocabulary or format of their own) refuse NUL. */
function refuseNul(s: Schema): Schema {
  if (s.type === 'string')
    return s.pattern === undefined && s.enum === undefined && s.format === undefined ? { ...s, pattern: NO_NUL } : s;
  if (s.type === 'array' && typeof s.items === 'object' && !('$ref' in (s.items as Schema)))
    return { ...s, items: refuseNul(s.items as Schema) };
  if (s.type === 'object' && typeof s.additionalProperties === 'object')
    return { ...s, additionalProperties: refuseNul(s.additionalProperties as Schema) };
  return s;
}

/** Answers are encoded with every implicit field (alwaysEmitImplicit): those are always present. */
function alwaysPresent(f: DescField): boolean {
  if (f.fieldKind === 'list' || f.fieldKind === 'map') return true;
  return f.fieldKind !== 'message' && f.presence === FeatureSet_FieldPresence.IMPLICIT;
}

export function messageSchema(m: DescMessage, role: Role, components: Components, omit: string[] = []): Schema {
  const name = componentName(m, role);
  const constraints = FIELD_CONSTRAINTS[name] ?? {};
  const properties: Record<string, Schema> = {};
  const fields = m.fields.filter((f) => !omit.includes(f.name));
  for (const f of fields) properties[f.name] = fieldSchema(f, role, components, constraints[f.name]);
  const required =
    role === 'response' ? fields.filter(alwaysPresent).map((f) => f.name) : (REQUIRED_REQUEST_FIELDS[name] ?? []);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(role === 'request' && CONTENT_OR_TEMPLATE.has(name) ? contentOrTemplate : {}),
    additionalProperties: false,
  };
}
