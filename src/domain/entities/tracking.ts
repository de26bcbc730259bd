import type { NewEvent } from '../events.js';

/** One fetch of the pixel (`link` undefined) or of a tracked link of an email. */
export interface TrackingHit {
  emailId: string;
  /** The `open` or `click` event this hit records if it is the first of its window and under the cap. */
  event: NewEvent<'open'> | NewEvent<'click'>;
  /** The link as signed in the token, for a click. */
  link?: string;
}

export interface TrackingRules {
  /** A target (the pixel, or one link) makes at most one event per this many seconds. */
  windowSeconds: number;
  /** Events hits may make per email, ever. */
  maxEventsPerEmail: number;
}

/** What became of a hit. */
export type HitOutcome = 'recorded' | 'counted' | 'unknown_email';

export interface TrackingCounts {
  openCount: number;
  clickCount: number;
}
