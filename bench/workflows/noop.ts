/** The trivial workflow of the Temporal baseline: one workflow task, no activity, no timer. */
export async function benchNoopWorkflow(): Promise<string> {
  return 'ok';
}
