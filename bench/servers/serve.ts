// Start-up and shutdown shared by the bench servers: the real startApp, configured from the
// environment like production (the harness sets PORT, HOST, DATA_DIR, LOG_LEVEL); a failed start
// exits 1 with the reason, SIGTERM and SIGINT close the app (in-flight requests finish, LMDB
// closes) and exit.
import { startApp, type RunningApp, type StartOptions } from '../../edge/app.js';

export async function serve(label: string, opts: StartOptions): Promise<RunningApp> {
  const app = await startApp(opts).catch((err: unknown) => {
    process.stderr.write(`${label}: start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`${label}: shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return app;
}
