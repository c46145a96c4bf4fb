// The smtp outbox provider against a small SMTP server on a real socket (EHLO, AUTH, MAIL, RCPT,
// DATA): email is delivered by SMTP, only its envelope is recorded, other channels fall back to
// the local provider, and a server that cannot be reached answers 503.
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, signIn, signupCustomer, signupOrg } from '../helpers/auth.js';
import { smtpServer } from '../helpers/smtp-server.js';
import { LeakGuard } from './leak-guard.js';

const guard = new LeakGuard();

t.test('smtp outbox - the magic code is delivered by SMTP; only the envelope is recorded', async (t) => {
  const smtp = await smtpServer(t);
  const app = await startTestApp(t, {
    modules: ['auth'],
    config: {
      providers: {
        outbox: 'smtp',
        smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer', pass: 'mailer-pass', from: 'Shop <no-reply@shop.example>' },
      },
    },
  });
  t.equal(app.deps.outbox.name, 'smtp', 'selected by config');
  const s = await signupOrg(app, { email: 'owner@smtp.example', orgName: 'Mail Shop' }, guard.sender(app));
  const r = await guard.send(app, '/profile/user/magic-link?email=owner@smtp.example&type=code', { headers: { orgid: s.orgId } });
  t.equal(r.status, 200);
  t.equal(smtp.mails.length, 1, 'one message reached the server');
  const mail = smtp.mails[0];
  t.equal(mail.auth, 'mailer:mailer-pass', 'authenticated with the configured credentials');
  t.match(mail.from, /no-reply@shop\.example/);
  t.same(mail.to.map((x) => x.replace(/[<>]/g, '')), ['owner@smtp.example']);
  const text = mail.data.replace(/=\n/g, '');
  t.match(text, /Subject: Your sign-in code/);
  const code = /sign-in code is (\d{6})/.exec(text)?.[1];
  t.ok(code, 'the code is in the mail body');

  const stored = readOutbox(app.deps.store, s.orgId);
  t.equal(stored.length, 1);
  t.equal(stored[0].provider, 'smtp');
  t.equal(stored[0].kind, 'magic-code');
  t.notOk(stored[0].code, 'no code recorded');
  t.notOk(stored[0].body, 'no body recorded');
  const listing = await guard.send(app, '/profile/outbox', { headers: bearer(s) });
  t.equal(listing.status, 200);
  t.equal(listing.body.data[0].to, 'owner@smtp.example');
  t.notOk(listing.text.includes(code!), 'the operators listing cannot show the code');

  const signedIn = await guard.send(app, '/profile/user/magic-link/redirect', { method: 'POST', headers: { orgid: s.orgId }, body: { email: 'owner@smtp.example', code } });
  t.equal(signedIn.status, 200, 'the mailed code signs in');
  guard.secret(code, 'NONE');
  guard.harvest(app, [s.orgId]);
});

t.test('smtp outbox - sms falls back to the local provider', async (t) => {
  const smtp = await smtpServer(t);
  const app = await startTestApp(t, {
    modules: ['auth'],
    config: { providers: { outbox: 'smtp', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, pass: null, from: 'x@shop.example' } } },
  });
  const s = await signupOrg(app, { email: 'owner@sms.example', orgName: 'Sms Shop' }, guard.sender(app));
  const c = await signupCustomer(app, s.orgId, { email: 'cust@sms.example', phone: '+15550100', verify: false }, guard.sender(app));
  // The sign-up's verification code went by mail (the outbox keeps envelopes only): the inbox proves the address.
  t.equal(smtp.mails.length, 1, 'the verification code went by email');
  const code = /\b(\d{6})\b/.exec(smtp.mails[0].data)?.[1];
  t.match(code, /^\d{6}$/);
  t.equal((await guard.send(app, '/profile/customer/verify-email', { method: 'POST', body: { code }, headers: bearer(c) })).status, 200);
  t.equal((await guard.send(app, '/profile/security/enable', { method: 'POST', body: { method: 'sms' }, headers: bearer(c) })).status, 200);
  const r = await signIn(app, s.orgId, 'cust@sms.example', undefined, { kind: 'customer' }, guard.sender(app));
  t.equal(r.body.twoFactorMethod, 'sms');
  t.equal(smtp.mails.length, 1, 'the sign-in code did not go by email');
  const sms = readOutbox(app.deps.store, s.orgId, '+15550100');
  t.equal(sms.length, 1);
  t.equal(sms[0].provider, 'local');
  t.equal(sms[0].channel, 'sms');
  t.match(sms[0].code, /^\d{6}$/);
  guard.harvest(app, [s.orgId]);
});

t.test('smtp outbox - an unreachable server answers 503', async (t) => {
  const probe = createServer();
  const port = await new Promise<number>((r) => probe.listen(0, '127.0.0.1', () => r((probe.address() as AddressInfo).port)));
  await new Promise<void>((r) => probe.close(() => r()));
  const app = await startTestApp(t, {
    modules: ['auth'],
    config: { providers: { outbox: 'smtp', smtp: { host: '127.0.0.1', port, secure: false, user: null, pass: null, from: 'x@shop.example' } } },
  });
  const s = await signupOrg(app, { email: 'owner@down.example', orgName: 'Down Shop' }, guard.sender(app));
  const r = await guard.send(app, '/profile/user/magic-link?email=owner@down.example&type=code', { headers: { orgid: s.orgId } });
  t.equal(r.status, 503);
  t.match(r.body.message, /could not be sent/);
  t.same(readOutbox(app.deps.store, s.orgId), [], 'nothing recorded as sent');
  guard.harvest(app, [s.orgId]);
});

t.test('smtp outbox - config refuses an unknown provider', async (t) => {
  const { loadConfig } = await import('../../core/config.js');
  t.throws(() => loadConfig({ providers: { outbox: 'carrier-pigeon' } }, {}), /providers\/outbox/);
  const cfg = loadConfig({}, { OUTBOX_PROVIDER: 'smtp', SMTP_HOST: 'mail.example', SMTP_PORT: '2525', SMTP_USER: 'u', SMTP_PASS: 'p', SMTP_FROM: 'a@b.example' });
  t.equal(cfg.providers.outbox, 'smtp');
  t.same(cfg.providers.smtp, { host: 'mail.example', port: 2525, secure: false, user: 'u', pass: 'p', from: 'a@b.example' });
  t.equal(loadConfig({}, {}).providers.outbox, 'local', 'local by default');
});

t.test('responses - never carry a password, hash, secret or code', async (t) => {
  guard.check(t);
});
