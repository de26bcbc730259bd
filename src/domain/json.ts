/** A value as JSON.parse answers it (a jsonb column as read): what erasure walks and writes back. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | JsonObject;
export type JsonObject = { readonly [key: string]: JsonValue };
