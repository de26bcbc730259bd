/**
 * Repeated opens and clicks: the first hit of a window is an event (and so webhooks), the rest only count.
 *
 * `tracking_windows` has one row per email and tracked target (the pixel, or one link, by the SHA-256 of
 * its text): when its last event was recorded. `tracking_counts` has one row per email: every hit, and
 * how many events hits have made, for the absolute cap. Both are changed by one statement per hit (see
 * tracking-repo.ts) whose upserts lock the rows they decide on, so concurrent hits cannot both win a window
 * or pass the cap. They are tables of their own so that a flood of hits never waits on, or holds, the
 * email row the delivery workflow updates.
 */
export const sql = /* sql */ `
CREATE TABLE tracking_windows (
  email_id text NOT NULL REFERENCES emails (id),
  kind text NOT NULL CHECK (kind IN ('open', 'click')),
  -- Empty for the pixel; sha256 of the link as signed in the token for a click.
  target bytea NOT NULL,
  last_event_at timestamptz NOT NULL,
  PRIMARY KEY (email_id, kind, target)
);

CREATE TABLE tracking_counts (
  email_id text PRIMARY KEY REFERENCES emails (id),
  -- Every fetch of the pixel and every followed link, events or not (saturating at the integer maximum).
  open_count integer NOT NULL DEFAULT 0,
  click_count integer NOT NULL DEFAULT 0,
  -- Events recorded for hits: never more than the per-email cap.
  event_count integer NOT NULL DEFAULT 0,
  -- The id of the last event recorded for a hit: how a statement learns that its own hit won.
  last_event_id text
);
`;
