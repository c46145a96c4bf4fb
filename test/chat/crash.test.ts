// A chat message's durability (issue 20): the sender's ack is released only after the message is
// persisted under CHAT_DURABILITY (default `commit`: written to the store's journal, which a
// start replays into LMDB), and fan-out runs from the same moment. So in the default
// configuration a server killed with SIGKILL while a group is busy loses no acknowledged message:
// after the restart the group's history has every one, with the seq its ack carried, in one
// gapless sequence.
//
// The server runs transpiled (helpers/transpiled.ts), as `npm start` runs it, with nothing but
// the environment as configuration.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { io, type Socket } from 'socket.io-client';
import t from 'tap';
import { TokenService } from '../../core/auth/tokens.js';
import { tempDir } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { transpiled } from '../helpers/transpiled.js';

const JWT_SECRET = 'chat-crash-secret-0123456789-0123456789-0123';
const GROUP = 'night-shift';
/** Sends in flight at once: enough that the kill lands with several unanswered. */
const IN_FLIGHT = 16;
/** Acks to collect before the kill. */
const BEFORE_KILL = 300;

interface Server {
  proc: ChildProcess;
  url: string;
  exited: Promise<void>;
}

async function start(entry: string, dataDir: string): Promise<Server> {
  // The default configuration: nothing but what a server needs to run here.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    JWT_SECRET,
    RATE_LIMITS: 'false',
    LOG_LEVEL: 'info',
  };
  const proc = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" within 60 s: ${out.slice(-2000)}`)), 60_000);
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      out = (out + l + '\n').slice(-20_000);
      if (l.includes('"msg":"listening"')) {
        clearTimeout(timer);
        resolve(JSON.parse(l).port);
      }
    });
    proc.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening: ${out.slice(-2000)}`));
    });
  });
  return { proc, url: `http://127.0.0.1:${port}`, exited };
}

function connect(url: string, org: string, token: string): Promise<Socket> {
  const s = io(url + '/community-chat', { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token, orgId: org } });
  return new Promise((resolve, reject) => {
    s.once('connect', () => resolve(s));
    s.once('connect_error', reject);
  });
}

t.test('chat durability - every group message acknowledged before kill -9 is in the history after restart, in sequence', async (t) => {
  const t0 = Date.now();
  const entry = transpiled('edge/main.ts');
  const dataDir = tempDir(t, 'bp-chat-crash-');
  let server = await start(entry, dataDir);
  const t1 = Date.now();
  t.teardown(() => {
    if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGKILL');
  });

  const signup = await request(server.url, '/profile/user/signup', {
    method: 'POST',
    body: { email: 'owner@chat-crash.example.com', password: 'correct-horse-battery', orgName: 'Chat Crash' },
  });
  t.equal(signup.status, 201, 'signed up');
  const org: string = signup.body.orgId;
  const tokens = new TokenService(JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 3600, cacheSize: 0 });
  const tokenOf = (sub: string) => tokens.signAccess({ sub, org, roles: [], kind: 'customer', email: `${sub}@chat-crash.example.com` });

  const sender = await connect(server.url, org, tokenOf('sender'));
  const listener = await connect(server.url, org, tokenOf('listener'));
  for (const s of [sender, listener]) await s.timeout(5000).emitWithAck('joinGroup', { groupId: GROUP });
  let heard = 0;
  listener.on('groupMessage', () => heard++);

  // Sends with IN_FLIGHT outstanding until the kill; every ack is recorded as it comes.
  const acked = new Map<string, { id: string; seq: number; text: string }>();
  let sent = 0;
  let killed = false;
  let reachedTarget!: () => void;
  const target = new Promise<void>((r) => (reachedTarget = r));
  const pump = async () => {
    while (!killed) {
      const clientId = `m${sent++}`;
      const text = `message ${clientId}`;
      try {
        const r = await sender.timeout(5000).emitWithAck('sendGroupMessage', { groupId: GROUP, text, clientId });
        if (r?.error) throw new Error(`refused: ${JSON.stringify(r.error)}`);
        if (!killed) acked.set(clientId, { id: r.id, seq: r.seq, text: r.text });
        if (acked.size >= BEFORE_KILL) reachedTarget();
      } catch {
        return; // the server died with this one in flight
      }
    }
  };
  const pumps = Array.from({ length: IN_FLIGHT }, pump);
  await target;
  // Everything acked so far must survive; what is in flight may or may not.
  const ackedAtKill = new Map(acked);
  const t2 = Date.now();
  killed = true;
  server.proc.kill('SIGKILL');
  await server.exited;
  await Promise.all(pumps);
  sender.disconnect();
  listener.disconnect();
  t.ok(heard > 0, `the listener heard the group while it ran (${heard} messages)`);
  t.ok(sent > ackedAtKill.size, `${sent} sent, ${ackedAtKill.size} acknowledged when the server was killed`);

  server = await start(entry, dataDir);
  const t3 = Date.now();
  const reader = { orgid: org, authorization: `Bearer ${tokenOf('listener')}` };
  const history: Array<{ id: string; seq: number; text: string; clientId?: string }> = [];
  for (;;) {
    const page = await request(server.url, `/client/community/threads/g:${GROUP}/messages?afterSeq=${history.length}&limit=200`, { headers: reader });
    t.equal(page.status, 200, 'history page');
    if (page.status !== 200) break;
    history.push(...page.body.messages);
    if (!page.body.hasMore) break;
  }

  const gaps = history.filter((m, i) => m.seq !== i + 1).map((m) => m.seq);
  t.same(gaps, [], `the history is one gapless sequence 1..${history.length}`);
  const lost = [...ackedAtKill].filter(([clientId, a]) => {
    const m = history[a.seq - 1];
    return !m || m.id !== a.id || m.clientId !== clientId || m.text !== a.text;
  });
  t.same(lost, [], `all ${ackedAtKill.size} acknowledged messages are there with the seq and id of their ack`);
  t.ok(history.length >= ackedAtKill.size, `${history.length} messages stored`);

  t.comment(`transpile + start ${t1 - t0} ms, set-up and sends ${t2 - t1} ms, restart ${t3 - t2} ms, check ${Date.now() - t3} ms`);
  server.proc.kill('SIGKILL');
  await server.exited;
});
