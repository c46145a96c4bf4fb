import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { LocalAiProvider, OpenAiCompatibleProvider, bestFaq, faqsFrom, HANDOVER_REPLY, words } from '../../core/ai.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { RunningApp } from '../../edge/app.js';
import { createOrg, startTestApp, staffHeaders } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, agent, chatSocket, collect, customer, eventually, once, until } from './helpers.js';

interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/** Reads a Server-Sent Events answer with node:http until the server ends it. */
function readSse(app: RunningApp, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; events: SseEvent[]; comments: string[] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, app.url), { headers, agent: false, timeout: 10_000 }, (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const events: SseEvent[] = [];
        const comments: string[] = [];
        for (const block of text.split('\n\n')) {
          if (!block.trim()) continue;
          const e: Partial<SseEvent> & { raw: string[] } = { event: 'message', raw: [] };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) e.event = line.slice(7);
            else if (line.startsWith('id: ')) e.id = line.slice(4);
            else if (line.startsWith('data: ')) e.raw.push(line.slice(6));
          }
          if (e.raw.length) events.push({ event: e.event!, id: e.id, data: JSON.parse(e.raw.join('\n')) });
        }
        resolve({ status: res.statusCode!, type: String(res.headers['content-type']), events, comments });
      });
    });
    req.on('timeout', () => req.destroy(new Error('SSE read timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function faqs(app: RunningApp, org: string): Promise<void> {
  const b = new WriteBatch();
  b.putRecord(newRecord(org, 'faq', { question: 'How do I get a refund?', answer: 'Refunds are paid back to your card within 5 days.', keywords: ['refund', 'money back'] }), 0);
  b.putRecord(newRecord(org, 'faq', { question: 'When do the doors open?', answer: 'Doors open at 6 pm.', keywords: ['doors', 'opening time'] }), 0);
  await app.deps.store.commit(b);
}

t.test('local AI provider - best keyword match, hand-over, word by word', async (t) => {
  const list = [
    { id: 'a', question: 'How do I get a refund?', answer: 'Refunds take 5 days.', keywords: ['refund'] },
    { id: 'b', question: 'When do the doors open?', answer: 'At 6 pm.', keywords: ['doors'] },
  ];
  t.equal(bestFaq(list, 'Can I have my REFUNDS please')?.faq.id, 'a');
  t.equal(bestFaq(list, 'what time do doors open tonight')?.faq.id, 'b');
  t.equal(bestFaq(list, 'is there parking'), undefined);
  t.same(words('Doors open\nat 6 pm.'), ['Doors ', 'open\n', 'at ', '6 ', 'pm.']);
  t.equal(words('Doors open\nat 6 pm.').join(''), 'Doors open\nat 6 pm.');
});

t.test('AI - a customer message to the AI is answered from the FAQ, streamed as ai-stream, stored, and readable over SSE to done', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { wordDelayMs: 5 } } } });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  await faqs(app, 'acme');
  const cust = await customer(app, 'acme');
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  t.match(auth.config, { aiEnabled: true, source: 'built-in' });
  const chunks = collect(sc, 'ai-stream');
  const answered = until(sc, 'message', (m: any) => m.from.role === 'ai');
  const done = until(sc, 'ai-stream', (d: any) => d.done);

  t.match(await ack(sc, 'sendMessage', { text: 'I would like a refund please' }), { seq: 1 });
  const reply = await answered;
  t.match(reply, { seq: 2, text: 'Refunds are paid back to your card within 5 days.', from: { role: 'ai', id: 'ai' } });
  const end = await done;
  t.match(end, { chatId: auth.chatId, streamId: /^[0-9a-f]{24}$/, messageId: reply.id, seq: 2, handover: false });
  const streamed = chunks.filter((c) => !c.done);
  t.ok(streamed.length > 5, 'word by word');
  t.equal(streamed.map((c) => c.chunk).join(''), reply.text);
  t.same(streamed.map((c) => c.index), streamed.map((_, i) => i));

  // The same answer over SSE, to its done event: bearer token...
  const sse = await readSse(app, `/ai/stream/${end.streamId}`, { authorization: `Bearer ${cust.token}` });
  t.equal(sse.status, 200);
  t.match(sse.type, /^text\/event-stream/);
  const data = sse.events.filter((e) => e.event === 'message');
  t.equal(data.map((e) => e.data.chunk).join(''), reply.text);
  t.same(data.map((e) => e.id), data.map((_, i) => String(i)), 'ids count the chunks');
  t.match(sse.events.at(-1), { event: 'done', data: { streamId: end.streamId, chatId: auth.chatId, messageId: reply.id, seq: 2 } });
  // ... or ?token= (EventSource cannot send headers), resuming after Last-Event-ID.
  const resumed = await readSse(app, `/ai/stream/${end.streamId}?token=${encodeURIComponent(cust.token)}`, { 'last-event-id': '2' });
  t.equal(resumed.events[0].id, '3');
  t.equal(resumed.events.at(-1)!.event, 'done');

  // Not found, not allowed, not signed in.
  const staff = staffHeaders(app, 'acme');
  t.equal((await readSse(app, `/ai/stream/${end.streamId}`, { authorization: staff.authorization })).status, 200, 'staff of the tenant');
  const stranger = await customer(app, 'acme', 'stranger');
  const notMine = await client(app.url).get(`/ai/stream/${end.streamId}`, { authorization: `Bearer ${stranger.token}` });
  t.equal(notMine.status, 404, "another customer's stream is not found");
  const otherTenant = await client(app.url).get(`/ai/stream/${end.streamId}`, staffHeaders(app, "other"));
  t.equal(otherTenant.status, 404, `another tenant: ${otherTenant.text}`);
  t.equal((await client(app.url).get(`/ai/stream/${end.streamId}`, { orgid: 'other', authorization: `Bearer ${cust.token}` })).status, 403);
  t.equal((await client(app.url).get('/ai/stream/0123456789abcdef01234567', staff)).status, 404, 'unknown stream');
  t.equal((await client(app.url).get(`/ai/stream/${end.streamId}`)).status, 401);
  t.equal((await client(app.url).get(`/ai/stream/${end.streamId}?token=nope`)).status, 401);
  t.equal((await client(app.url).get('/ai/stream/xyz', staff)).status, 400);
});

t.test('AI - live SSE while the answer is still streaming, heartbeat comments', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { wordDelayMs: 40 } }, chat: { sseHeartbeatMs: 50 } } });
  await createOrg(app, 'acme');
  await faqs(app, 'acme');
  const cust = await customer(app, 'acme');
  const { s: sc } = await chatSocket(t, app, 'acme', cust);
  const firstChunk = until(sc, 'ai-stream', (d: any) => !d.done);
  await ack(sc, 'sendMessage', { text: 'when do the doors open' });
  const { streamId } = await firstChunk;
  const sse = await readSse(app, `/ai/stream/${streamId}`, { authorization: `Bearer ${cust.token}` });
  t.equal(sse.events.filter((e) => e.event === 'message').map((e) => e.data.chunk).join(''), 'Doors open at 6 pm.');
  t.equal(sse.events.at(-1)!.event, 'done');
  t.ok(sse.comments.includes('heartbeat'), 'heartbeats while waiting for words');
});

t.test('AI - no FAQ matches: a polite hand-over, and the chat goes to the queue', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { wordDelayMs: 0 } } } });
  await createOrg(app, 'acme');
  await faqs(app, 'acme');
  const cust = await customer(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const handover = until(sc, 'message', (m: any) => m.from.role === 'ai');
  const queued = once(sc, 'queue-notification');
  const staffSees = until(sa, 'queue-updated', (d: any) => d.waiting === 1);
  await ack(sc, 'sendMessage', { text: 'Is there parking for bikes?' });
  t.match(await handover, { text: HANDOVER_REPLY, metadata: { handover: true } });
  t.match(await queued, { chatId: auth.chatId, position: 1 });
  await staffSees;
  const http = client(app.url, staffHeaders(app, 'acme'));
  t.match((await http.get(`/chat/queue/position/${auth.chatId}`)).body, { status: 'queued', position: 1 });
});

t.test('AI - takeover from the AI, resume-ai hands back, assist-ai drafts for the agent only (also over SSE)', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { wordDelayMs: 0 } } } });
  await createOrg(app, 'acme');
  await faqs(app, 'acme');
  const cust = await customer(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const chatId = auth.chatId;
  const aiDone = until(sc, 'ai-stream', (d: any) => d.done);
  await ack(sc, 'sendMessage', { text: 'refund?' });
  await aiDone;

  // An agent takes the chat from the AI: the AI stops answering.
  const assigned = once(sc, 'agent-assigned');
  t.match(await ack(sa, 'takeover-chat', { chatId }), { chat: { status: 'assigned', agentId: alice.id } });
  await assigned;
  const aiAfter = collect(sc, 'ai-stream');
  const toAgent = until(sa, 'message', (m: any) => m.text === 'thanks, and the doors?');
  await ack(sc, 'sendMessage', { text: 'thanks, and the doors?' });
  await toAgent;
  t.equal(aiAfter.length, 0, 'no AI answer while an agent has the chat');
  t.match(await ack(sa, 'takeover-chat', { chatId }), { error: { statusCode: 409 } }, 'already taken');

  // assist-ai: a draft for the agent's eyes only.
  const customerDrafts = collect(sc, 'chat-stream');
  const draftDone = until(sa, 'chat-stream', (d: any) => d.done);
  const assist = await ack(sa, 'assist-ai', { chatId });
  t.match(assist, { chatId, streamId: /^[0-9a-f]{24}$/ });
  t.match(await draftDone, { chatId, streamId: assist.streamId, text: 'Doors open at 6 pm.' });
  t.equal(customerDrafts.length, 0);
  const draft = await readSse(app, `/ai/stream/${assist.streamId}`, { authorization: `Bearer ${alice.token}` });
  t.equal(draft.events.at(-1)!.event, 'done');
  t.equal((await client(app.url).get(`/ai/stream/${assist.streamId}`, { authorization: `Bearer ${cust.token}` })).status, 404, 'drafts are staff only');

  // resume-ai: back to the AI, which answers the last customer message.
  const update = until(sc, 'update', (d: any) => d.type === 'status' && d.status === 'ai');
  const aiAgain = until(sc, 'message', (m: any) => m.from.role === 'ai' && m.seq > 3);
  t.match(await ack(sa, 'resume-ai', { chatId }), { chat: { status: 'ai', agentId: null } });
  await update;
  t.match(await aiAgain, { text: 'Doors open at 6 pm.' });
});

t.test('AI - an OpenAI-compatible endpoint streams real deltas (base URL and key from config)', async (t) => {
  const seen: Array<{ auth?: string; body: any }> = [];
  const upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body: JSON.parse(raw) });
      if (req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of ['Hello', ' from', ' the', ' model.']) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: piece } }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => upstream.close(() => r())));
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;

  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { provider: 'openai', baseUrl, apiKey: 'sk-test', model: 'test-model' } } } });
  await createOrg(app, 'acme');
  await faqs(app, 'acme');
  const cust = await customer(app, 'acme');
  const { s: sc } = await chatSocket(t, app, 'acme', cust);
  const answered = until(sc, 'message', (m: any) => m.from.role === 'ai');
  const chunks = collect(sc, 'ai-stream');
  await ack(sc, 'sendMessage', { text: 'say hello, and tell me about a refund' });
  t.match(await answered, { text: 'Hello from the model.' });
  await eventually(() => chunks.some((c) => c.done), 2000, 'done');
  t.same(chunks.filter((c) => !c.done).map((c) => c.chunk), ['Hello', ' from', ' the', ' model.']);
  t.equal(seen[0].auth, 'Bearer sk-test');
  t.match(seen[0].body, { model: 'test-model', stream: true, messages: [{ role: 'system', content: /Refunds are paid back/ }, { role: 'user', content: /refund/ }] });

  // A failing endpoint ends the stream with an error, not a crash.
  const bad = new OpenAiCompatibleProvider({ provider: 'openai', baseUrl: `${baseUrl}/nope`, apiKey: null, model: 'm', wordDelayMs: 0, timeoutMs: 2000 }, faqsFrom(app.deps.store));
  const failed = await bad.answer({ tenant: 'acme', purpose: 'reply', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.match(failed, { statusCode: 503, message: 'the AI provider answered 404' });
  const local = new LocalAiProvider(faqsFrom(app.deps.store), 0);
  const a = await local.answer({ tenant: 'acme', purpose: 'assist', messages: [{ role: 'user', content: 'parking?' }] });
  t.equal(a.handover, false, 'an assist draft never hands over');
});
