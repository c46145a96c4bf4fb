import t from 'tap';
import { createOrg, startTestApp } from '../helpers/app.js';
import { ack, agent, chatSocket, customer, eventually, once } from './helpers.js';

t.test('reconnect - a customer who comes back with chatSessionId and lastSeq gets every message sent meanwhile', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const cust = await customer(app, 'acme');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const chatId = auth.chatId;
  await ack(sc, 'chatRequest', {});
  await ack(sa, 'pick-next', {});
  const m1 = await ack(sa, 'sendMessage', { chatId, text: 'first' });
  t.equal(m1.seq, 1);
  sc.disconnect();

  // While the customer is away the agent keeps writing; every message is acked (committed).
  for (const text of ['second', 'third', 'fourth']) await ack(sa, 'sendMessage', { chatId, text });

  const { s: back, auth: again, messages: replayed } = await chatSocket(t, app, 'acme', cust, { chatSessionId: auth.chatSessionId, lastSeq: 1 });
  t.match(again, { chatSessionId: auth.chatSessionId, chatId, resumed: true, lastSeq: 4, chat: { status: 'assigned' } });
  await eventually(() => replayed.length >= 3, 2000, 'replay');
  t.same(
    replayed.map((m) => [m.seq, m.text]),
    [
      [2, 'second'],
      [3, 'third'],
      [4, 'fourth'],
    ],
    'every later message, in order',
  );

  // And live delivery continues after the replay.
  const live = once(back, 'message');
  await ack(sa, 'sendMessage', { chatId, text: 'fifth' });
  t.match(await live, { seq: 5, text: 'fifth' });
});

t.test('reconnect - an agent gets missed messages of their chats from lastSeqs', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const cust = await customer(app, 'acme');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  await ack(sc, 'chatRequest', { message: 'hello?' });
  await ack(sa, 'pick-next', {});
  sa.disconnect();
  await ack(sc, 'sendMessage', { text: 'are you there?' });
  await ack(sc, 'sendMessage', { text: 'anyone?' });

  const { s: back, auth: a2, messages: got } = await chatSocket(t, app, 'acme', alice, { lastSeqs: { [auth.chatId]: 1 } });
  t.match(a2, { role: 'agent', chatId: null, chats: [auth.chatId] });
  await eventually(() => got.length >= 2, 2000, 'replay');
  t.same(got.map((m) => m.seq), [2, 3]);
  // Still subscribed to the chat: a new customer message arrives live.
  const live = once(back, 'message');
  await ack(sc, 'sendMessage', { text: 'ok' });
  t.match(await live, { seq: 4 });
});

t.test("reconnect - someone else's chatSessionId is not resumed", async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const c1 = await customer(app, 'acme', 'one');
  const c2 = await customer(app, 'acme', 'two');
  const { auth: a1 } = await chatSocket(t, app, 'acme', c1);
  const { auth: a2 } = await chatSocket(t, app, 'acme', c2, { chatSessionId: a1.chatSessionId, chatId: a1.chatId });
  t.not(a2.chatSessionId, a1.chatSessionId, 'a new session is issued');
  t.equal(a2.resumed, false);
  t.not(a2.chatId, a1.chatId, "another customer's chat id is never handed out, even before that chat starts");
});
