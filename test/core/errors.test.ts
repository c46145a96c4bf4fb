import t from 'tap';
import { AppError, ErrorCodes, appError, fromWire, statusName, toEnvelope, toWire } from '../../core/errors.js';

t.test('errors - every key of the table equals its code, with an HTTP status', async (t) => {
  for (const [key, def] of Object.entries(ErrorCodes)) {
    t.equal(def.code, key, `${key} names itself`);
    t.ok(def.statusCode >= 400 && def.statusCode < 600, `${key} has an error status`);
    t.ok(statusName(def.statusCode) !== 'Error', `${key}'s status has a canonical name`);
  }
});

t.test('errors - envelope from an AppError, a validation list and an unknown error', async (t) => {
  t.same(toEnvelope(appError('ERR_VERSION_CONFLICT', 'product x', 1, 2)), {
    statusCode: 409,
    message: 'version conflict on product x: expected version 1, stored version is 2; refetch and retry',
    error: 'Conflict',
  });
  t.same(toEnvelope(new AppError('ERR_VALIDATION', ['a; b'], { messages: ['a', 'b'] })), {
    statusCode: 400,
    message: ['a', 'b'],
    error: 'Bad Request',
  });
  const unknown = toEnvelope(new TypeError('x is undefined at /srv/file.ts:1'));
  t.same(unknown, { statusCode: 500, message: 'internal server error', error: 'Internal Server Error' });
});

t.test('errors - the wire form keeps code, message and headers', async (t) => {
  const e = new AppError('ERR_RATE_LIMITED', [3], { headers: { 'retry-after': '3' } });
  const back = fromWire(toWire(e));
  t.type(back, AppError);
  t.equal(back.code, 'ERR_RATE_LIMITED');
  t.equal(back.statusCode, 429);
  t.equal(back.message, e.message);
  t.same(back.headers, { 'retry-after': '3' });
  t.equal(fromWire(toWire(new Error('private'))).statusCode, 500);
  t.equal(fromWire({ code: 'ERR_NO_SUCH_CODE', message: 'x' }).code, 'ERR_INTERNAL');
});
