import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import t from 'tap';
import { loadCatalogue } from '../../edge/routes/integrations/catalogue.js';
import { assertStaffOnly, messages, setup } from './setup.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

t.test('integrations - providers per category with JSON Schema configuration', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a, b } = env;
  const ajv = new Ajv({ strict: false });
  addFormats(ajv);
  for (const category of ['Shipping', 'Inventory', 'Payments', 'Messaging']) {
    const r = await a.get(`/upstream/integration-use-cases/${category}`);
    t.equal(r.status, 200, category);
    t.ok(Array.isArray(r.body) && r.body.length >= 3, `${category}: several providers`);
    for (const p of r.body) {
      t.equal(p.category, category);
      t.type(p.id, 'string');
      t.type(p.name, 'string');
      t.equal(p.configSchema.type, 'object', `${category}/${p.id}: an object schema`);
      t.doesNotThrow(() => ajv.compile(p.configSchema), `${category}/${p.id}: a valid JSON Schema`);
    }
  }
  const pay = (await a.get('/upstream/integration-use-cases/payments')).body;
  t.same(pay.map((p: any) => p.category), pay.map(() => 'Payments'), 'the category is matched case-insensitively');
  const stripe = pay.find((p: any) => p.id === 'stripe');
  const check = ajv.compile(stripe.configSchema);
  t.equal(check({ secretKey: 'sk_test_abc123', publishableKey: 'pk_test_abc123' }), true, 'a good configuration passes its schema');
  t.equal(check({ publishableKey: 'pk_test_abc123' }), false, 'a configuration missing the secret fails it');
  t.equal(stripe.configSchema.properties.secretKey.writeOnly, true, 'secrets are marked writeOnly');
  const twilio = (await a.get('/upstream/integration-use-cases/Messaging')).body.find((p: any) => p.id === 'twilio');
  t.ok(twilio, 'the voice/SMS provider is in Messaging');

  t.same((await a.get('/upstream/integration-use-cases/Teleportation')).body, [], 'an unknown category answers []');
  t.equal((await a.get('/upstream/integration-use-cases/Teleportation')).status, 200);
  t.equal((await b.get('/upstream/integration-use-cases/Shipping')).status, 200, 'the catalogue is the same for every org');
  t.match(messages(await a.get(`/upstream/integration-use-cases/${'x'.repeat(65)}`)), /params\/category/);
  await assertStaffOnly(t, env, 'get', '/upstream/integration-use-cases/Shipping');
});

t.test('integrations - a broken catalogue is refused at load, naming the entry', async (t) => {
  t.throws(
    () => loadCatalogue({ categories: { Shipping: [{ id: 'bad', name: 'Bad', description: 'd', configSchema: { type: 'object', properties: { x: { type: 'strin' } } } }] } }),
    /Shipping\/bad: configSchema is not a valid JSON Schema/,
  );
  t.throws(
    () => loadCatalogue({ categories: { Payments: [{ id: 'p', name: 'P', description: 'd', configSchema: {} }, { id: 'p', name: 'P', description: 'd', configSchema: {} }] } }),
    /duplicate provider id/,
  );
  t.equal(loadCatalogue().get('inventory')?.length! >= 3, true, 'the shipped catalogue loads');
});
