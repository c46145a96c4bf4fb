// A small SMTP server on a real socket for tests: EHLO, AUTH (PLAIN and LOGIN), MAIL, RCPT, DATA,
// QUIT. It keeps every message it accepts; closed in teardown.
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface Mail {
  from: string;
  to: string[];
  data: string;
  auth?: string;
}

export async function smtpServer(t: { teardown(fn: () => unknown): void }): Promise<{ port: number; mails: Mail[] }> {
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, mails };
}
