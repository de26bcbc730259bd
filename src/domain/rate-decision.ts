/** Where a caller stands against its request rate, for the adapters to tell it in their own terms. */
export interface RateDecision {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
}
