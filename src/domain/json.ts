/** A value as JSON.parse answers it (a jsonb column as read): what erasure walks and writes back. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | JsonObject;
export type JsonObject = { readonly [key: string]: JsonValue };

/** JSON as a decoded request carries it (a proto Struct field): the same values with mutable arrays. */
export type WireJsonValue = string | number | boolean | null | WireJsonValue[] | WireJsonObject;
export type WireJsonObject = { [key: string]: WireJsonValue };
