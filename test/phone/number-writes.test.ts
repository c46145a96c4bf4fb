import t from 'tap';
import { setup } from '../crm/setup.js';

t.test('phone numbers - admins changing one number at once are applied one after the other, none lost', async (t) => {
  const { admin } = await setup(t, { modules: ['phone'] });
  const number = '+15557770001';
  t.equal((await admin.post('/phone/numbers', { number })).status, 201);

  // Each names one setting; the number's actor applies them in turn, so each keeps the others.
  const replies = await Promise.all([
    admin.post('/phone/numbers', { number, label: 'Front desk' }),
    admin.post('/phone/numbers', { number, capabilities: ['voice'] }),
    admin.post('/phone/numbers', { number, assignedTo: ['ana@acme.test'] }),
    admin.post('/phone/numbers', { number: '+1 555 777 0001', label: 'Front desk' }),
  ]);
  t.same(replies.map((r) => r.status), [200, 200, 200, 200], 'no change refused');

  const list = await admin.get('/phone/numbers');
  t.equal(list.body.total, 1);
  t.match(list.body.data[0], { number, label: 'Front desk', capabilities: ['voice'], assignedTo: ['ana@acme.test'], shared: false });
});

t.test('phone numbers - creating one number twice at once makes one record, created once', async (t) => {
  const { admin } = await setup(t, { modules: ['phone'] });
  const replies = await Promise.all([
    admin.post('/phone/numbers', { number: '+15557770002', label: 'One' }),
    admin.post('/phone/numbers', { number: '+15557770002', label: 'Two' }),
  ]);
  t.same(replies.map((r) => r.status).sort(), [200, 201], 'one creates, the other changes it');
  const list = await admin.get('/phone/numbers');
  t.equal(list.body.total, 1);
});
