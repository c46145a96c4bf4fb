// The process entry: `npm start` runs this (built). Configuration comes from config/default.json
// and the environment; SIGTERM and SIGINT shut down gracefully (stop accepting, finish requests in
// flight, let actors commit, close LMDB).
import { ConfigError } from '../core/config.js';
import { startApp } from './app.js';

async function main(): Promise<void> {
  let app;
  try {
    app = await startApp();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const running = app;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.deps.logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
