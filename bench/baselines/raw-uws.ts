// The raw ceiling: the least a uWebSockets.js server can do and still answer the bench requests
// correctly. POST /bench/echo reads the body, parses the JSON and answers the same bytes as the
// edge's bench route (status, content type, body); no validation, auth, ids, metrics or logs.
// The edge scenario divides its rate by this one's. (Outside edge/ only because it is a
// baseline: the point is to bypass the edge.)
import uWS from 'uWebSockets.js';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const JSON_TYPE = 'application/json';
const HEALTH = JSON.stringify({ status: 'ok' });

interface EchoBody {
  name: string;
  qty: number;
  tags: string[];
}

/** The edge's answer: its response schema lists these fields in this order. */
function answer(b: EchoBody): string {
  return JSON.stringify({ ok: true, name: b.name, qty: b.qty, tags: b.tags });
}

const app = uWS.App();

app.get('/healthz', (res) => {
  res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end(HEALTH);
});

app.post('/bench/echo', (res) => {
  let aborted = false;
  let chunks: Buffer[] = [];
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory once this callback returns: copy it.
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || aborted) return;
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    chunks = [];
    let out: string;
    let status = '200 OK';
    try {
      out = answer(JSON.parse(raw.toString('utf8')) as EchoBody);
    } catch {
      status = '400 Bad Request';
      out = JSON.stringify({ statusCode: 400, message: 'body is not valid JSON', error: 'Bad Request' });
    }
    res.cork(() => {
      res.writeStatus(status).writeHeader('content-type', JSON_TYPE).end(out);
    });
  });
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen(host, port, (sock) => {
  if (!sock) {
    process.stderr.write(`raw-uws: could not listen on ${host}:${port}\n`);
    process.exit(1);
  }
  const stop = () => {
    uWS.us_listen_socket_close(sock);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
