import { fromJson, type MessageInitShape } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { SuppressionRow } from '../domain/entities/suppressions.js';
import type { SuppressionEntrySchema } from '../gen/mail/v1/suppressions_pb.js';
import { iso } from './presenters.js';

/**
 * A suppression's topic as the API shows it: the topic, or null when it has none (stored as '', migration 25).
 * A google.protobuf.Value, so that JSON answers carry an explicit null rather than leave the field out.
 */
export const presentTopic = (topic: string) => fromJson(ValueSchema, topic === '' ? null : topic);

/** A suppression as the account's own API shows it (CONTRACT.md): `{email, reason, scope, topic, created_at}`. */
export function presentSuppressionEntry(s: SuppressionRow): MessageInitShape<typeof SuppressionEntrySchema> {
  return {
    email: s.address,
    reason: s.reason,
    scope: s.scope,
    topic: presentTopic(s.topic),
    createdAt: iso(s.createdAt),
  };
}
