import type { EventType } from '../catalog.js';
import type { EmailRow } from './emails.js';

export interface WebhookRow {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  secret: string;
  /** The secret before the last rotation, and until when it still signs (the overlap). */
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  /** Set when deliveries kept failing past the threshold (or null): nothing is attempted until enabled. */
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'discarded';

/** Why a delivery was discarded: every attempt failed, the webhook was disabled, or it was deleted. */
export type DiscardReason = 'retries_exhausted' | 'webhook_disabled' | 'webhook_deleted';

/** When a webhook is disabled: this many deliveries discarded in a row, the first at least `hours` ago. */
export interface DisableThreshold {
  discards: number;
  hours: number;
}

export interface WebhookAttemptRow {
  attempt: number;
  startedAt: Date;
  statusCode: number;
  latencyMs: number;
  responseExcerpt: string;
  error: string;
}

export interface WebhookDeliveryRow {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** The email the event is about; null for an `inbound` event (about an inbound email, no email we sent). */
  emailId: string | null;
  /** The inbound email an `inbound` event is about; null for every other event. */
  inboundId: string | null;
  status: WebhookDeliveryStatus;
  createdAt: Date;
  completedAt: Date | null;
  discardReason: DiscardReason | null;
  attempts: WebhookAttemptRow[];
}

/** Everything one attempt needs: where, with which secret, and the event with its email (none for `inbound`). */
export interface DeliveryToSend {
  id: string;
  status: WebhookDeliveryStatus;
  /** Attempts counted so far (claimForSending has counted the one it hands out). */
  attempt: number;
  /** Undefined once the webhook was deleted. `secrets`: the current one, then the previous during an overlap. */
  webhook: { id: string; url: string; secrets: string[]; disabled: boolean } | undefined;
  /** `inboundId`: the inbound email an `inbound` event is about (null for events of an email). */
  event: { id: string; type: EventType; at: Date; data: Record<string, unknown>; inboundId: string | null };
  /** Undefined for an event about no email we sent (`inbound`): its body has no `email`. */
  email: EmailRow | undefined;
}
