// The smtp outbox provider against a small SMTP server on a real socket (EHLO, AUTH, MAIL, RCPT,
// DATA): email is delivered by SMTP, only its envelope is recorded, other channels fall back to
// the local provider, and a server that cannot be reached answers 503.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, signIn, signupCustomer, signupOrg } from '../helpers/auth.js';
import { LeakGuard } from './leak-guard.js';

interface Mail {
  from: string;
  to: string[];
  data: string;
  auth?: string;
}

function smtpServer(): Promise<{ server: Server; port: number; mails: Mail[] }> {
  const mails: Mail[] = [];
  const server = createServer((sock: Socket) => {
    let buf = '';
    let mail: Mail = { from: '', to: [], data: '' };
    let inData = false;
    let auth: string | undefined;
    let loginStep = 0;
    const reply = (line: string) => sock.write(`${line}\r\n`);
    reply('220 test.local ESMTP');
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      let i: number;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            mails.push({ ...mail, auth });
            mail = { from: '', to: [], data: '' };
            reply('250 2.0.0 queued as TEST1');
          } else mail.data += (line.startsWith('..') ? line.slice(1) : line) + '\n';
          continue;
        }
        if (loginStep === 1) {
          auth = Buffer.from(line, 'base64').toString();
          loginStep = 2;
          reply('334 UGFzc3dvcmQ6');
          continue;
        }
        if (loginStep === 2) {
          auth += `:${Buffer.from(line, 'base64').toString()}`;
          loginStep = 0;
          reply('235 2.7.0 authenticated');
          continue;
        }
        const cmd = line.split(' ')[0].toUpperCase();
        if (cmd === 'EHLO' || cmd === 'HELO') {
          sock.write('250-test.local\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n');
        } else if (cmd === 'AUTH') {
          const [, mech, initial] = line.split(' ');
          if (mech.toUpperCase() === 'PLAIN') {
            const [, user, pass] = Buffer.from(initial ?? '', 'base64').toString().split('\u0000');
            auth = `${user}:${pass}`;
            reply('235 2.7.0 authenticated');
          } else {
            loginStep = 1;
            reply('334 VXNlcm5hbWU6');
          }
        } else if (cmd === 'MAIL') {
          mail.from = line.slice(10).trim();
          reply('250 OK');
        } else if (cmd === 'RCPT') {
          mail.to.push(line.slice(8).trim());
          reply('250 OK');
        } else if (cmd === 'DATA') {
          inData = true;
          reply('354 end with .');
        } else if (cmd === 'QUIT') {
          reply('221 bye');
          sock.end();
        } else reply('250 OK');
      }
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, mails })));
}

const guard = new LeakGuard();

t.test('smtp outbox - the magic code is delivered by SMTP; only the envelope is recorded', async (t) => {
  const smtp = await smtpServer();
  t.teardown(() => new Promise<void>((r) => smtp.server.close(() => r())));
  const app = await startTestApp(t, {
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
  const smtp = await smtpServer();
  t.teardown(() => new Promise<void>((r) => smtp.server.close(() => r())));
  const app = await startTestApp(t, {
    config: { providers: { outbox: 'smtp', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, pass: null, from: 'x@shop.example' } } },
  });
  const s = await signupOrg(app, { email: 'owner@sms.example', orgName: 'Sms Shop' }, guard.sender(app));
  const c = await signupCustomer(app, s.orgId, { email: 'cust@sms.example', phone: '+15550100' }, guard.sender(app));
  t.equal((await guard.send(app, '/profile/security/enable', { method: 'POST', body: { method: 'sms' }, headers: bearer(c) })).status, 200);
  const r = await signIn(app, s.orgId, 'cust@sms.example', undefined, { kind: 'customer' }, guard.sender(app));
  t.equal(r.body.twoFactorMethod, 'sms');
  t.equal(smtp.mails.length, 0, 'nothing went by email');
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
