// The raw ceiling of the `repository` scenario: the least a uWebSockets.js server can do and
// still answer the scenario's requests with the same bytes as the record store routes. It holds
// the fixture pre-serialized in memory and answers GET /repository/get/sf_order/:id and
// POST /repository/find/sf_order (body `{query: {"data.customerId": ...}}`, or the same inside
// `$and`) by one Map lookup; with REPOSITORY_DECLARED=true also POST /repository/find/bench_order
// (the find-declared side's datatype) the same way:
// no tenant, token, validation, store, metrics or logs. (Outside edge/ because bypassing the
// edge is the point of a baseline.)
import uWS from 'uWebSockets.js';
import { CUSTOMERS, customerIdOf, DATATYPE, DECLARED_DATATYPE, findJson, RECORDS, recordJson, recordOf } from '../fixtures/repository-records.js';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const JSON_TYPE = 'application/json';
const NOT_FOUND = JSON.stringify({ statusCode: 404, message: 'not found', error: 'Not Found' });

const records = new Map<string, string>();
for (let i = 0; i < RECORDS; i++) {
  const rec = recordOf(i);
  records.set(rec.sk, recordJson(rec));
}
function findAnswers(datatype: string): Map<string, string> {
  const byCustomer = new Map<string, string>();
  for (let c = 0; c < CUSTOMERS; c++) byCustomer.set(customerIdOf(c), findJson(c, datatype));
  return byCustomer;
}

const app = uWS.App();

app.get('/healthz', (res) => {
  res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end('{"status":"ok"}');
});

app.get(`/repository/get/${DATATYPE}/:id`, (res, req) => {
  const body = records.get(req.getParameter(0) ?? '');
  if (body) res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end(body);
  else res.writeStatus('404 Not Found').writeHeader('content-type', JSON_TYPE).end(NOT_FOUND);
});

const finds = process.env.REPOSITORY_DECLARED === 'true' ? [DATATYPE, DECLARED_DATATYPE] : [DATATYPE];
for (const datatype of finds) {
  const byCustomer = findAnswers(datatype);
  app.post(`/repository/find/${datatype}`, (res) => {
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
      let body: string | undefined;
      try {
        const q = (JSON.parse(raw.toString('utf8')) as { query?: { 'data.customerId'?: string; $and?: Array<{ 'data.customerId'?: string }> } }).query ?? {};
        // The find-and side sends the same equality inside `$and`.
        body = byCustomer.get(q['data.customerId'] ?? q.$and?.[0]?.['data.customerId'] ?? '');
      } catch {
        body = undefined;
      }
      const out = body ?? '{"data":[],"total":0,"hasNext":false,"page":1,"pageSize":20}';
      res.cork(() => {
        res.writeStatus('200 OK').writeHeader('content-type', JSON_TYPE).end(out);
      });
    });
  });
}

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});

app.listen(host, port, (sock) => {
  if (!sock) {
    process.stderr.write(`raw-uws-record: could not listen on ${host}:${port}\n`);
    process.exit(1);
  }
  const stop = () => {
    uWS.us_listen_socket_close(sock);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
