/**
 * The child side of bench/lib/children.ts: answers typed requests from the bench process and exits when
 * the bench process goes away (its IPC channel closes), so that a killed bench leaves nothing running.
 */
export type Handlers = Record<string, (arg: never) => unknown>;

export function serve(handlers: Handlers, ready: unknown, onStop: () => Promise<void> = async () => {}): void {
  if (!process.send) throw new Error('run this file from bench/run.ts (it needs an IPC channel)');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => process.exit(1), 4_000);
    timer.unref();
    // The process exits either way; a failed stop is said, then the exit code tells.
    onStop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('bench child stop failed', err);
        process.exit(1);
      },
    );
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  // Ctrl-C reaches the whole process group; the bench process decides when children stop.
  process.on('SIGINT', () => {});
  process.on('message', (msg: { id: number; type: string; arg: never }) => {
    const handler = handlers[msg.type];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown request ${msg.type}`);
        return handler(msg.arg);
      })
      .then(
        (result) => process.send?.({ id: msg.id, result }),
        (err: unknown) =>
          process.send?.({ id: msg.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  process.send({ type: 'ready', ready });
}
