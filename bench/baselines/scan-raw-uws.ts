// The raw ceiling of the scan benchmark: uWebSockets.js with nothing between the socket and the
// in-memory scan logic (bench/baselines/scan-memory.ts): no validation library, no route table, no
// durability, no scan log, no metrics. The scan scenario divides the service's rate by this one's.
// (Outside edge/ only because it is a baseline: the point is to bypass the edge.)
import uWS from 'uWebSockets.js';
import { MemoryScanner, TICKETS } from './scan-memory.js';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const JSON_TYPE = 'application/json';
const scanner = new MemoryScanner(TICKETS);
const app = uWS.App();

app.get('/healthz', (res) => {
  res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end('{"status":"ok"}');
});

app.get('/bench/stats', (res) => {
  res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end(scanner.stats());
});

app.post('/events/checkin', (res, req) => {
  const authorization = req.getHeader('authorization');
  const orgid = req.getHeader('orgid');
  let aborted = false;
  let chunks: Buffer[] = [];
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || aborted) return;
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    chunks = [];
    const who = scanner.authenticate(authorization, orgid);
    let status = 200;
    let out: string;
    if (typeof who !== 'string') {
      status = who.status;
      out = who.body;
    } else {
      try {
        const a = scanner.checkIn(JSON.parse(raw.toString('utf8')), who);
        status = a.status;
        out = a.body;
      } catch {
        status = 400;
        out = '{"statusCode":400,"message":"body is not valid JSON","error":"Bad Request"}';
      }
    }
    res.cork(() => {
      res.writeStatus(status === 200 ? '200 OK' : `${status} Error`).writeHeader('content-type', JSON_TYPE).end(out);
    });
  });
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen(host, port, (sock) => {
  if (!sock) {
    process.stderr.write(`scan-raw-uws: could not listen on ${host}:${port}\n`);
    process.exit(1);
  }
  const stop = () => {
    uWS.us_listen_socket_close(sock);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
