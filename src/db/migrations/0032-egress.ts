/**
 * Egress shaping (issue 28, docs/deliverability.md): state that every worker process honours and the admin
 * API shows, beside the rules file (which holds the configuration, not the state).
 *
 * - `egress_sites`: per destination site (a group of MX hosts), what the automation rules decided (a
 *   throttled rate until a time, a suspension, source addresses suspended at this site), the last replies
 *   that matched a rule, and the live figures of the last worker to write. A worker writes a suspension the
 *   moment it takes it and reads every site's row every few seconds, so a suspension one worker takes holds
 *   for all, and an operator lifting it (DELETE /admin/egress/sites/{site}/suspension) is seen by all.
 * - `egress_warmup_usage`: messages sent per source address per UTC day, against its warm-up plan. A
 *   worker reserves budget here in small blocks with one conditional statement, so however many workers
 *   send, an address never goes past its day's allowance.
 */
export const sql = /* sql */ `
CREATE TABLE egress_sites (
  site text PRIMARY KEY,
  throttle_rate text,
  throttled_until timestamptz,
  suspended_until timestamptz,
  suspended_sources jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_replies jsonb NOT NULL DEFAULT '[]'::jsonb,
  connections integer NOT NULL DEFAULT 0 CHECK (connections >= 0),
  attempts_last_minute integer NOT NULL DEFAULT 0 CHECK (attempts_last_minute >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE egress_sites IS 'Egress shaping state per destination site: throttles, suspensions and recent replies every worker honours.';

CREATE TABLE egress_warmup_usage (
  source_address text NOT NULL,
  day date NOT NULL,
  sent integer NOT NULL DEFAULT 0 CHECK (sent >= 0),
  PRIMARY KEY (source_address, day)
);
COMMENT ON TABLE egress_warmup_usage IS 'Messages reserved per source address per UTC day against its warm-up plan.';
`;
