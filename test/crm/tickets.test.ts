import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { A, assertStaffOnly, B, messages, setup } from './setup.js';

async function openTicket(a: Awaited<ReturnType<typeof setup>>['a'], extra: Record<string, unknown> = {}) {
  const r = await a.post('/crm/tickets/detail', {
    subject: 'Refund for order 1042',
    requester: { email: 'Buyer@Example.com', name: 'Buyer' },
    description: 'I was charged twice.',
    ...extra,
  });
  return r;
}

t.test('support tickets - open, list, get and change with a version check', async (t) => {
  const { a, b } = await setup(t, { modules: ['crm'] });
  const r = await openTicket(a, { priority: 'high' });
  t.equal(r.status, 201);
  const ticket = r.body.ticket;
  t.equal(ticket.datatype, 'support_ticket', 'datatype support_ticket, not the event ticket');
  t.equal(ticket.data.status, 'open');
  t.equal(ticket.data.priority, 'high');
  t.equal(ticket.data.requester.email, 'buyer@example.com');
  t.equal(ticket.data.messageCount, 1, 'the description is the first message');
  t.equal(r.body.message.data.author.type, 'requester');
  await openTicket(a, { subject: 'Where is my badge?', description: undefined });

  const list = await a.get('/crm/tickets/detail');
  t.equal(list.body.total, 2);
  t.equal((await a.get('/crm/tickets/detail?priority=high')).body.total, 1);
  t.equal((await a.get('/crm/tickets/detail?q=badge')).body.data[0].data.subject, 'Where is my badge?');
  t.equal((await a.get('/crm/tickets/detail?requester=BUYER@example.com')).body.total, 2);
  t.equal((await a.get(`/crm/tickets/detail/${ticket.sk}`)).body.data.subject, 'Refund for order 1042');

  const upd = await a.put(`/crm/tickets/detail/${ticket.sk}`, { version: ticket.version, data: { assignee: 'Agent@acme.test', status: 'pending' } });
  t.equal(upd.status, 200);
  t.equal(upd.body.data.assignee, 'agent@acme.test');
  t.equal(upd.body.data.status, 'pending');
  const stale = await a.put(`/crm/tickets/detail/${ticket.sk}`, { version: ticket.version, data: { status: 'closed' } });
  t.equal(stale.status, 409);
  t.equal((await a.get('/crm/tickets/detail?status=pending')).body.total, 1);
  const unassign = await a.put(`/crm/tickets/detail/${ticket.sk}`, { version: upd.body.version, data: { assignee: null } });
  t.equal(unassign.body.data.assignee, null);

  // Isolation.
  t.equal((await b.get('/crm/tickets/detail')).body.total, 0);
  t.equal((await b.get(`/crm/tickets/detail/${ticket.sk}`)).status, 404);
  t.equal((await b.put(`/crm/tickets/detail/${ticket.sk}`, { version: 3, data: { status: 'closed' } })).status, 404);
});

t.test('support tickets - a reply is public and emailed; a comment is internal and never sent', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a, b, app } = env;
  const ticket = (await openTicket(a)).body.ticket;
  const id = ticket.sk;

  const reply = await a.post(`/crm/tickets/reply/${id}`, { body: 'We refunded the second charge.', status: 'solved' });
  t.equal(reply.status, 201);
  t.equal(reply.body.message.data.kind, 'message');
  t.equal(reply.body.message.data.visibility, 'public');
  t.equal(reply.body.message.data.author.email, 'agent@acme.test');
  t.equal(reply.body.ticket.data.status, 'solved');
  t.equal(reply.body.ticket.data.messageCount, 2);

  const comment = await a.post(`/crm/tickets/comments/${id}`, { body: 'Customer is a VIP: refund approved by finance.' });
  t.equal(comment.status, 201);
  t.equal(comment.body.message.data.kind, 'comment');
  t.equal(comment.body.message.data.visibility, 'internal');
  t.equal(comment.body.ticket.data.commentCount, 1);
  t.equal(comment.body.ticket.data.messageCount, 2, 'a comment is not a message');

  // The requester got exactly the reply, never the comment.
  const mail = readOutbox(app.deps.store, A, 'buyer@example.com');
  t.equal(mail.length, 1, 'one email to the requester');
  t.equal(mail[0].channel, 'email');
  t.equal(mail[0].body, 'We refunded the second charge.');
  t.equal(mail[0].subject, 'Re: Refund for order 1042');
  t.equal(mail[0].payload?.ticketId, id);
  t.equal(reply.body.message.data.delivery.outboxId, mail[0].id, 'the message records its delivery');
  t.notOk(readOutbox(app.deps.store, A).some((m) => m.body.includes('VIP')), 'no message anywhere carries the comment');

  const thread = await a.get(`/crm/tickets/messages/${id}`);
  t.equal(thread.status, 200);
  t.same(thread.body.data.map((m: any) => m.data.body), ['I was charged twice.', 'We refunded the second charge.'], 'public thread, oldest first');
  t.notOk(thread.body.data.some((m: any) => m.data.kind === 'comment'), 'comments never listed with messages');
  const comments = await a.get(`/crm/tickets/comments/${id}`);
  t.same(comments.body.data.map((m: any) => m.data.body), ['Customer is a VIP: refund approved by finance.']);
  t.equal(comments.body.total, 1);

  // Paging of the thread.
  for (let i = 0; i < 3; i++) await a.post(`/crm/tickets/reply/${id}`, { body: `follow-up ${i}` });
  const page2 = await a.get(`/crm/tickets/messages/${id}?pageSize=2&page=2`);
  t.same(page2.body.data.map((m: any) => m.data.body), ['follow-up 0', 'follow-up 1']);
  t.equal(page2.body.total, 5);
  t.equal(page2.body.hasNext, true);
  t.equal(readOutbox(app.deps.store, A, 'buyer@example.com').length, 4);

  // Another org's staff cannot read or write the thread.
  t.equal((await b.get(`/crm/tickets/messages/${id}`)).status, 404);
  t.equal((await b.get(`/crm/tickets/comments/${id}`)).status, 404);
  t.equal((await b.post(`/crm/tickets/reply/${id}`, { body: 'hi' })).status, 404);
  t.equal((await b.post(`/crm/tickets/comments/${id}`, { body: 'hi' })).status, 404);
  t.equal(readOutbox(app.deps.store, B).length, 0);

  // Unknown tickets.
  const missing = '0123456789abcdef01234567';
  t.equal((await a.get(`/crm/tickets/messages/${missing}`)).status, 404);
  t.equal((await a.post(`/crm/tickets/reply/${missing}`, { body: 'x' })).status, 404);
  t.equal((await a.post(`/crm/tickets/comments/${missing}`, { body: 'x' })).status, 404);
  t.equal(readOutbox(app.deps.store, A).length, 4, 'a reply to no ticket sends nothing');
});

t.test('support tickets - concurrent replies keep exact counts', async (t) => {
  const { a } = await setup(t, { modules: ['crm'] });
  const id = (await openTicket(a, { description: undefined })).body.ticket.sk;
  await Promise.all(Array.from({ length: 10 }, (_, i) => a.post(`/crm/tickets/reply/${id}`, { body: `r${i}` })));
  await Promise.all(Array.from({ length: 5 }, (_, i) => a.post(`/crm/tickets/comments/${id}`, { body: `c${i}` })));
  const tk = (await a.get(`/crm/tickets/detail/${id}`)).body;
  t.equal(tk.data.messageCount, 10);
  t.equal(tk.data.commentCount, 5);
  t.equal(tk.version, 16);
});

t.test('support tickets - validation and access', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a } = env;
  const bad = await a.post('/crm/tickets/detail', { requester: { email: 'nope' }, priority: 'asap' });
  t.equal(bad.status, 400);
  t.match(messages(bad), /body\/subject is required/);
  t.match(messages(bad), /body\/requester\/email/);
  t.match(messages(bad), /body\/priority/);
  const id = (await openTicket(a)).body.ticket.sk;
  const emptyReply = await a.post(`/crm/tickets/reply/${id}`, {});
  t.equal(emptyReply.status, 400);
  t.match(messages(emptyReply), /body\/body is required/);
  const badStatus = await a.post(`/crm/tickets/reply/${id}`, { body: 'x', status: 'done' });
  t.equal(badStatus.status, 400);
  t.match(messages(badStatus), /body\/status/);
  t.equal((await a.post(`/crm/tickets/comments/${id}`, { body: '' })).status, 400);
  t.equal((await a.get('/crm/tickets/messages/xyz')).status, 400);
  const badPut = await a.put(`/crm/tickets/detail/${id}`, { version: 1, data: { requester: { email: 'x@y.z' } } });
  t.equal(badPut.status, 400, 'the requester is not changed through PUT');
  t.match(messages(badPut), /body\/data\/requester is not allowed/);

  await assertStaffOnly(t, env, 'get', '/crm/tickets/detail');
  await assertStaffOnly(t, env, 'post', '/crm/tickets/detail', { subject: 's', requester: { email: 'a@b.co' } });
  await assertStaffOnly(t, env, 'get', `/crm/tickets/detail/${id}`);
  await assertStaffOnly(t, env, 'put', `/crm/tickets/detail/${id}`, { version: 1, data: { status: 'closed' } });
  await assertStaffOnly(t, env, 'get', `/crm/tickets/messages/${id}`);
  await assertStaffOnly(t, env, 'post', `/crm/tickets/reply/${id}`, { body: 'x' });
  await assertStaffOnly(t, env, 'get', `/crm/tickets/comments/${id}`);
  await assertStaffOnly(t, env, 'post', `/crm/tickets/comments/${id}`, { body: 'x' });
  t.equal(readOutbox(env.app.deps.store, A).length, 0, 'refused replies sent nothing');
});
