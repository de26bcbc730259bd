/**
 * The W3C `traceparent` of the span an email was accepted under (the REST or gRPC request, the SMTP
 * submission, the scheduled or batch job's activity), when tracing is on; NULL otherwise.
 *
 * Why a column rather than carrying the context along: an accepted email waits in delivery_queue until a
 * dispatcher gathers it with up to 200 others into one delivery workflow, so no request context reaches the
 * workflow by itself, and a workflow's one parent cannot be 200 requests. Each email's delivery span is made
 * a child of this stored context (and linked to the delivery activity's span), so one trace follows an
 * email from its request to the SMTP reply. It is kept on `emails`, not on delivery_queue, because retries
 * of a deferred email run after its queue row is gone.
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN traceparent text;
`;
