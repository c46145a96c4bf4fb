import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { client } from '../helpers/http.js';
import { A, assertStaffOnly, B, messages, setup, WEBHOOK_SECRET } from './setup.js';

const OUR = '+15550000001';

function webhook(env: Awaited<ReturnType<typeof setup>>, org = A) {
  return client(env.app.url, { orgid: org, 'x-webhook-secret': WEBHOOK_SECRET });
}

t.test('inbox - threads by contact plus channel, counts unread, publishes sms.received', async (t) => {
  const env = await setup(t, { modules: ['crm', 'phone', 'records'] });
  const { a, app } = env;
  const hook = webhook(env);
  const seen: any[] = [];
  app.deps.bus.subscribe(`sms.received.${A}`, (ev) => seen.push(ev));

  const s1 = await hook.post('/phone/inbound/sms', { from: '+1 (555) 123-4567', to: OUR, body: 'Is the venue open?', sid: 'SM001' });
  t.equal(s1.status, 200);
  t.equal(s1.body.received, true);
  t.equal(s1.body.duplicate, false);
  const s2 = await hook.post('/phone/inbound/sms', { from: '+15551234567', to: OUR, body: 'Hello?', sid: 'SM002' });
  t.equal(s2.body.conversationId, s1.body.conversationId, 'same number, however written: same conversation');
  const other = await hook.post('/phone/inbound/sms', { from: '+15559999999', to: OUR, body: 'Tickets left?', sid: 'SM003' });
  t.not(other.body.conversationId, s1.body.conversationId, 'another contact: another conversation');
  const dup = await hook.post('/phone/inbound/sms', { from: '+15551234567', to: OUR, body: 'Hello?', sid: 'SM002' });
  t.equal(dup.body.duplicate, true, 'a retried webhook is recorded once');
  t.equal(dup.body.messageId, s2.body.messageId);

  await app.deps.bus.flush();
  t.equal(seen.length, 3, 'sms.received published once per new message, after commit');
  t.equal(seen[0].datatype, 'comm_message');
  t.equal(seen[0].data.body, 'Is the venue open?');
  t.equal(seen[0].data.from, '+15551234567');
  t.ok(app.deps.store.getRecord(A, 'comm_message', seen[0].sk), 'the published record is committed');

  // The same person by email is a different conversation (contact plus channel).
  const mail = await a.post('/crm/inbox/update?send=true', { channel: 'email', contact: 'Ana@Example.com', message: { subject: 'Your booking', body: 'See you Friday' } });
  t.equal(mail.status, 200);
  t.equal(mail.body.conversation.data.channel, 'email');
  t.equal(mail.body.conversation.data.contact, 'ana@example.com');
  t.equal(mail.body.conversation.data.unread, 0);
  t.equal(mail.body.conversation.version, 1);

  const list = await a.get('/crm/inbox/conversations');
  t.equal(list.status, 200);
  t.equal(list.body.total, 3);
  t.same(
    list.body.data.map((c: any) => `${c.data.channel}:${c.data.contact}`),
    ['email:ana@example.com', 'sms:+15559999999', 'sms:+15551234567'],
    'most recent message first',
  );
  const ana = list.body.data.find((c: any) => c.data.contact === '+15551234567');
  t.equal(ana.data.unread, 2);
  t.equal(ana.data.messageCount, 2);
  t.equal(ana.data.lastMessagePreview, 'Hello?');
  t.equal(list.body.unreadTotal, 3);
  t.equal(list.body.unreadConversations, 2);
  t.equal((await a.get('/crm/inbox/conversations?channel=sms')).body.total, 2);
  t.equal((await a.get('/crm/inbox/conversations?unread=true')).body.total, 2);
  t.equal((await a.get('/crm/inbox/conversations?unread=false')).body.total, 1);
  t.equal((await a.get('/crm/inbox/conversations?q=9999')).body.total, 1);
  t.same((await a.get('/crm/inbox/conversations?pageSize=1&page=3')).body.data[0].data.contact, '+15551234567');

  // The thread, by channel:contact or by id.
  const th = await a.get(`/crm/inbox/conversations/${encodeURIComponent('sms:+1 555 123 4567')}`);
  t.equal(th.status, 200);
  t.equal(th.body.conversation.sk, s1.body.conversationId);
  t.same(th.body.messages.data.map((m: any) => m.data.body), ['Is the venue open?', 'Hello?'], 'oldest first');
  t.same(th.body.messages.data.map((m: any) => m.data.read), [false, false]);
  const byId = await a.get(`/crm/inbox/conversations/${s1.body.conversationId}?sortType=desc`);
  t.same(byId.body.messages.data.map((m: any) => m.data.body), ['Hello?', 'Is the venue open?']);
  t.equal((await a.get('/crm/inbox/conversations/sms:+15550000077')).status, 404);
  t.equal((await a.get('/crm/inbox/conversations/fax:123')).status, 400);

  // Read flags, assignment, status.
  const read = await a.post('/crm/inbox/update', { conversationId: s1.body.conversationId, read: true, assignedTo: 'Agent@acme.test', status: 'pending' });
  t.equal(read.status, 200);
  t.equal(read.body.conversation.data.unread, 0);
  t.equal(read.body.conversation.data.assignedTo, 'agent@acme.test');
  t.equal(read.body.conversation.data.status, 'pending');
  const after = await a.get(`/crm/inbox/conversations/${s1.body.conversationId}`);
  t.same(after.body.messages.data.map((m: any) => m.data.read), [true, true], 'every inbound message marked read');
  const unreadOne = await a.post('/crm/inbox/update', { conversationId: s1.body.conversationId, read: false });
  t.equal(unreadOne.body.conversation.data.unread, 1, 'mark unread flags the newest inbound message');
  const specific = await a.post('/crm/inbox/update', { conversationId: s1.body.conversationId, read: false, messageIds: [s1.body.messageId] });
  t.equal(specific.body.conversation.data.unread, 2);
  const badId = await a.post('/crm/inbox/update', { conversationId: s1.body.conversationId, read: true, messageIds: [other.body.messageId] });
  t.equal(badId.status, 404, "another conversation's message is not this one's");
  t.equal((await a.get('/crm/inbox/conversations?assignedTo=agent@acme.test')).body.total, 1);
  t.equal((await a.get('/crm/inbox/conversations?assignedTo=none')).body.total, 2);
  t.equal((await a.get('/crm/inbox/conversations?status=pending')).body.total, 1);

  const closed = await a.post('/crm/inbox/update', { channel: 'sms', contact: '+15559999999', status: 'closed', assignedTo: null });
  t.equal(closed.body.conversation.data.status, 'closed');
  await hook.post('/phone/inbound/sms', { from: '+15559999999', to: OUR, body: 'One more thing', sid: 'SM004' });
  const reopened = await a.get('/crm/inbox/conversations/sms:+15559999999');
  t.equal(reopened.body.conversation.data.status, 'open', 'a new inbound message reopens a closed conversation');
  t.equal(reopened.body.conversation.data.unread, 2);
});

t.test('inbox - send=true wraps the message into a record and sends it through the outbox', async (t) => {
  const env = await setup(t, { modules: ['crm', 'phone', 'records'] });
  const { a, b, app } = env;
  const hook = webhook(env);
  const inbound = await hook.post('/phone/inbound/sms', { from: '+15551234567', to: OUR, body: 'Can I bring a dog?', sid: 'SM100' });

  const sent = await a.post('/crm/inbox/update?send=true', { conversationId: inbound.body.conversationId, message: { body: 'Yes, dogs are welcome.' }, read: true });
  t.equal(sent.status, 200);
  const m = sent.body.message;
  t.equal(m.datatype, 'comm_message');
  t.equal(m.data.direction, 'outbound');
  t.equal(m.data.channel, 'sms');
  t.equal(m.data.to, '+15551234567');
  t.equal(m.data.from, OUR, 'replies from the number the contact wrote to');
  t.equal(m.data.sentBy, 'agent@acme.test');
  t.equal(sent.body.conversation.data.messageCount, 2);
  t.equal(sent.body.conversation.data.unread, 0);
  t.equal(sent.body.conversation.data.lastDirection, 'outbound');

  const out = readOutbox(app.deps.store, A, '+15551234567');
  t.equal(out.length, 1, 'one SMS in the outbox');
  t.equal(out[0].channel, 'sms');
  t.equal(out[0].body, 'Yes, dogs are welcome.');
  t.equal(out[0].payload?.from, OUR);
  t.equal(out[0].payload?.messageId, m.sk);
  t.equal(m.data.delivery.outboxId, out[0].id);

  // A new SMS contact: the conversation opens with the send.
  const fresh = await a.post('/crm/inbox/update?send=true', { channel: 'sms', contact: '+44 20 7946 0000', message: { body: 'Your table is ready', from: '+15550000002' } });
  t.equal(fresh.status, 200);
  t.equal(fresh.body.conversation.data.contact, '+442079460000');
  t.equal(readOutbox(app.deps.store, A, '+442079460000')[0].payload?.from, '+15550000002');

  // Email.
  await a.post('/crm/inbox/update?send=true', { channel: 'email', contact: 'ana@example.com', message: { body: 'Receipt attached', subject: 'Receipt' } });
  const mail = readOutbox(app.deps.store, A, 'ana@example.com');
  t.equal(mail.length, 1);
  t.equal(mail[0].channel, 'email');
  t.equal(mail[0].subject, 'Receipt');

  // The communications log shows both directions of SMS.
  const sms = await a.get('/crm/communications/sms');
  t.same(sms.body.data.map((r: any) => r.data.direction), ['outbound', 'outbound', 'inbound'], 'newest first');
  t.equal((await a.get('/crm/communications/sms?direction=inbound')).body.total, 1);
  t.equal((await a.get('/crm/communications/sms?contact=%2B1-555-123-4567')).body.total, 2);

  // Refusals write nothing.
  const before = readOutbox(app.deps.store, A).length;
  const chat = await a.post('/crm/inbox/update?send=true', { channel: 'chat', contact: 'visitor-1', message: { body: 'hi' } });
  t.equal(chat.status, 400, 'chat has no outbox provider');
  t.match(messages(chat), /chat channel/);
  const noMsg = await a.post('/crm/inbox/update?send=true', { conversationId: inbound.body.conversationId });
  t.equal(noMsg.status, 400);
  t.match(messages(noMsg), /body\/message is required with send=true/);
  const noSend = await a.post('/crm/inbox/update', { conversationId: inbound.body.conversationId, message: { body: 'x' } });
  t.equal(noSend.status, 400);
  t.match(messages(noSend), /only accepted with send=true/);
  const noTarget = await a.post('/crm/inbox/update', { status: 'closed' });
  t.equal(noTarget.status, 400);
  t.match(messages(noTarget), /body\/conversationId is required/);
  const nothing = await a.post('/crm/inbox/update', { conversationId: inbound.body.conversationId });
  t.match(messages(nothing), /must change something/);
  const badContact = await a.post('/crm/inbox/update?send=true', { channel: 'sms', contact: 'not a number', message: { body: 'x' } });
  t.equal(badContact.status, 400);
  t.match(messages(badContact), /body\/contact/);
  const badQuery = await a.post('/crm/inbox/update?send=maybe', { conversationId: inbound.body.conversationId, message: { body: 'x' } });
  t.equal(badQuery.status, 400);
  t.match(messages(badQuery), /query\/send/);
  const badFields = await a.post('/crm/inbox/update', { channel: 'fax', assignedTo: 'nobody', status: 'archived' });
  t.equal(badFields.status, 400);
  t.match(messages(badFields), /body\/channel/);
  t.match(messages(badFields), /body\/assignedTo/);
  t.match(messages(badFields), /body\/status/);
  t.equal((await a.post('/crm/inbox/update', { conversationId: '0123456789abcdef01234567', status: 'closed' })).status, 404);
  t.equal(readOutbox(app.deps.store, A).length, before, 'refused sends queued nothing');

  // Isolation: B sees none of A's conversations and cannot change them.
  t.equal((await b.get('/crm/inbox/conversations')).body.total, 0);
  t.equal((await b.get(`/crm/inbox/conversations/${inbound.body.conversationId}`)).status, 404);
  t.equal((await b.post('/crm/inbox/update', { conversationId: inbound.body.conversationId, read: true })).status, 404);
  t.equal((await b.get('/crm/communications/sms')).body.total, 0);
  t.equal((await a.get(`/crm/inbox/conversations/${inbound.body.conversationId}`)).body.conversation.data.unread, 0);
});

t.test('inbox - concurrent inbound messages keep an exact unread count', async (t) => {
  const env = await setup(t, { modules: ['crm', 'phone', 'records'] });
  const hook = webhook(env);
  await Promise.all(Array.from({ length: 20 }, (_, i) => hook.post('/phone/inbound/sms', { from: '+15551234567', to: OUR, body: `m${i}`, sid: `SMc${i}` })));
  const c = (await env.a.get('/crm/inbox/conversations/sms:+15551234567')).body.conversation;
  t.equal(c.data.unread, 20);
  t.equal(c.data.messageCount, 20);
});

t.test('inbox - access', async (t) => {
  const env = await setup(t, { modules: ['crm', 'phone', 'records'] });
  await assertStaffOnly(t, env, 'get', '/crm/inbox/conversations');
  await assertStaffOnly(t, env, 'get', '/crm/inbox/conversations/sms:+15551234567');
  await assertStaffOnly(t, env, 'post', '/crm/inbox/update?send=true', { channel: 'sms', contact: '+15551234567', message: { body: 'x' } });
  t.equal(readOutbox(env.app.deps.store, A).length + readOutbox(env.app.deps.store, B).length, 0, 'nothing was sent');
});

t.test('inbox - a conversation record written through the record store with odd data still lists', async (t) => {
  const { a } = await setup(t, { modules: ['crm', 'phone', 'records'] });
  for (const data of [{}, { unread: 'many', channel: 7 }]) {
    const r = await a.post('/repository/create', { datatype: 'inbox_conversation', data, isNew: true, version: 0 });
    t.equal(r.status, 201);
  }
  const list = await a.get('/crm/inbox/conversations');
  t.equal(list.status, 200, 'no 500 from records the inbox did not write');
  t.equal(list.body.data.length, 2);
  t.ok(list.body.data.some((c: any) => c.data.unread === 'many'), 'answered as stored');
});
