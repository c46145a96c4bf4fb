import t from 'tap';
import { LocalOutbox, readOutbox } from '../../core/outbox.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

t.test('LocalOutbox - records messages per tenant, alone or inside a batch', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const outbox = new LocalOutbox(store);
  const sent = await outbox.send('acme', { channel: 'email', to: 'a@example.com', subject: 'Hi', body: 'Your code', code: '123456', kind: 'magic-code' });
  t.equal(sent.provider, 'local');
  t.match(sent.id, /^[0-9a-f]{24}$/);
  const b = new WriteBatch();
  await outbox.send('acme', { channel: 'sms', to: '+15550100', body: 'Table ready' }, b);
  t.equal(readOutbox(store, 'acme').length, 1, 'a batched message waits for its batch');
  await store.commit(b);
  const all = readOutbox(store, 'acme');
  t.same(all.map((m) => m.channel), ['email', 'sms']);
  t.equal(all[0].code, '123456');
  t.same(readOutbox(store, 'acme', '+15550100').map((m) => m.body), ['Table ready']);
  t.same(readOutbox(store, 'globex'), [], 'tenants see only their own messages');
});
