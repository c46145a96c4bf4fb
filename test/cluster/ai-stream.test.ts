// An AI answer made on one node is readable over Server-Sent Events through any node: behind a load
// balancer the customer's EventSource need not reach the node holding their socket.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import t from 'tap';
import { io } from 'socket.io-client';
import { ack, collect, once, until } from '../chat/helpers.js';
import { TestCluster, token } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 3, orgs: ['fest'] });

/** GET an SSE stream to its end: the `data:` payloads of each event, by event name. */
function readSse(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; events: Array<{ event: string; data: any }> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { headers, agent: false, timeout: 10_000 }, (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const events: Array<{ event: string; data: any }> = [];
        for (const block of text.split('\n\n')) {
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) });
        }
        resolve({ status: res.statusCode!, events });
      });
    });
    req.on('timeout', () => req.destroy(new Error('SSE read timed out')));
    req.on('error', reject);
    req.end();
  });
}

t.test('cluster - an AI answer made on node 1 streams over SSE through nodes 2 and 3, to the same customer only', async (t) => {
  const id = 'cust-ai-reader';
  const cust = token({ org: 'fest', kind: 'customer', sub: id, customerId: id, email: 'reader@example.com' });
  const s = io(cluster.nodes[0].url + '/chat', { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token: cust, orgId: 'fest' } });
  t.teardown(() => s.disconnect());
  await once(s, 'authenticate');
  const chunks = collect(s, 'ai-stream');
  const done = until(s, 'ai-stream', (d: any) => d.done, 15_000);
  await ack(s, 'sendMessage', { text: 'is there parking at the venue' });
  const end = await done;
  const text = chunks.filter((c) => !c.done).map((c) => c.chunk).join('');
  t.ok(text.length > 0, 'the answer streamed on the socket of node 1');

  for (const node of [1, 2, 0]) {
    const sse = await readSse(cluster.nodes[node].url, `/ai/stream/${end.streamId}`, { authorization: `Bearer ${cust}` });
    t.equal(sse.status, 200, `node ${node + 1} has the stream`);
    t.equal(sse.events.filter((e) => e.event === 'message').map((e) => e.data.chunk).join(''), text, `node ${node + 1}: the whole answer`);
    t.match(sse.events.at(-1), { event: 'done', data: { streamId: end.streamId } }, `node ${node + 1}: to its end`);
  }
  const stranger = token({ org: 'fest', kind: 'customer', sub: 'cust-other', customerId: 'cust-other', email: 'other@example.com' });
  const notMine = await readSse(cluster.nodes[2].url, `/ai/stream/${end.streamId}`, { authorization: `Bearer ${stranger}` });
  t.equal(notMine.status, 404, "another customer's copy is not found either");
});
