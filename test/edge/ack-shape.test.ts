// A socket ack leaves as fast-json-stringify shapes it, whichever path the shaper takes: results
// that already have the schema's shape go out as they are (no serialize and parse per message),
// the rest are shaped. The end-to-end acks are asserted by the chat and community socket tests.
import { Type, type TSchema } from '@sinclair/typebox';
import fastJson from 'fast-json-stringify';
import t from 'tap';
import { compileAckShape } from '../../edge/sockets/ack-shape.js';
import { AnyAck, CommunityMessage, Ok } from '../../edge/sockets/schemas.js';

const serializerShape = (schema: TSchema, v: unknown) => JSON.parse((fastJson(schema as object) as (x: unknown) => string)(v)) as unknown;

const message = {
  id: 'm1',
  seq: 3,
  threadId: 'g:grp',
  groupId: 'grp',
  from: { id: 'u1', name: 'Ann' },
  text: 'hi',
  at: '2026-11-28T10:00:00.000Z',
  clientId: 'c1',
};

const Closed = Type.Object({ a: Type.Integer(), inner: Type.Object({ b: Type.String() }), list: Type.Array(Type.Object({ c: Type.Boolean() })) });
const Choice = Type.Object({ v: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ a: Type.String(), b: Type.String() })]) });

const cases: Array<[string, TSchema, unknown]> = [
  ['a message as the actor answers it', CommunityMessage, message],
  ['a message with an undeclared field (the schema allows extra fields)', CommunityMessage, { ...message, extra: 1 }],
  ['a message with a number where a string is declared', CommunityMessage, { ...message, text: 42 }],
  ['a message with a numeric string where an integer is declared', CommunityMessage, { ...message, seq: '7' }],
  ['ok', Ok, { ok: true }],
  ['ok with an undeclared field', Ok, { ok: true, secret: 'x' }],
  ['a record of anything', AnyAck, { a: 1, b: { c: [1, 2] } }],
  ['nested closed objects as declared', Closed, { a: 1, inner: { b: 'x' }, list: [{ c: true }] }],
  ['nested closed objects with undeclared fields deep down', Closed, { a: 1, inner: { b: 'x', hidden: 1 }, list: [{ c: true, hidden: 2 }] }],
  ['a fraction where an integer is declared', Closed, { a: 1.7, inner: { b: 'x' }, list: [] }],
  ['alternatives, where the serializer picks the first that fits', Choice, { v: { a: 'x', b: 'y' } }],
];

t.test('ack shape - every result leaves as fast-json-stringify shapes it', async (t) => {
  for (const [name, schema, value] of cases) {
    t.same(compileAckShape(schema)(value), serializerShape(schema, value), name);
  }
});

t.test('ack shape - a result that already has its shape goes out as it is', async (t) => {
  t.equal(compileAckShape(CommunityMessage)(message), message, 'the same message, not a parsed copy');
  const shaped = compileAckShape(Ok)({ ok: true, secret: 'x' }) as Record<string, unknown>;
  t.same(shaped, { ok: true }, 'an undeclared field of a closed schema never leaves');
  t.notOk('secret' in shaped);
});

t.test('ack shape - a result the serializer refuses throws as before (the socket answers the error)', async (t) => {
  t.throws(() => compileAckShape(CommunityMessage)({ ok: true }), /required/);
});
