// Cluster mode serves socket.io on websocket only (polling would need sticky sessions): the
// default client, which starts on HTTP long-polling, gets one connect_error saying to use the
// websocket transport; a websocket client connects. One node in cluster mode on a real nats-server is enough.
import t from 'tap';
import { io } from 'socket.io-client';
import { once, sleep } from '../chat/helpers.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());
const app = await startTestApp(t, { modules: ['chat'], config: { natsUrl: nats.url, nodeId: 'polling-1', cluster: { prefix: `t${Math.random().toString(36).slice(2, 8)}` } } });
await createOrg(app, 'fest');

t.test('cluster - a polling client is told to use transports: [websocket]; a websocket client connects', async (t) => {
  t.ok(app.cluster, 'cluster mode');
  const auth = { token: tokenFor(app, { org: 'fest', kind: 'customer', sub: 'cust-ann', customerId: 'cust-ann', email: 'ann@example.com' }), orgId: 'fest' };
  const polling = io(app.url + '/community-chat', { forceNew: true, auth });
  t.teardown(() => {
    polling.disconnect();
  });
  const errors: Array<Error & { data?: any }> = [];
  polling.on('connect_error', (e) => errors.push(e));
  const err = await once<Error & { data?: any }>(polling, 'connect_error');
  t.match(err.message, /cluster.*transports: \['websocket'\]/);
  t.match(err.data, { statusCode: 400, error: 'Bad Request' });
  await sleep(300);
  t.equal(errors.length, 1, 'one error, no retry loop');
  t.notOk(polling.connected);
  t.notOk(polling.active, 'the client does not reconnect');

  const ws = io(app.url + '/community-chat', { forceNew: true, reconnection: false, transports: ['websocket'], auth });
  t.teardown(() => {
    ws.disconnect();
  });
  await once(ws, 'connect');
  t.ok(ws.connected);
});
