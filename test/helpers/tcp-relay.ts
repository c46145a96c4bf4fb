// A TCP relay on loopback in front of a server, that a test can cut as a network partition would:
// `cut()` drops every connection through it and refuses new ones (accepted, then closed at once)
// until `mend()`. The client behind it sees its socket close and reconnects when it can.
import { connect, createServer, type Socket } from 'node:net';
import type { Test } from 'tap';

export interface TcpRelay {
  /** Where clients connect (nats://127.0.0.1:<port>). */
  url: string;
  cut(): void;
  mend(): void;
}

export async function startTcpRelay(t: Test, targetPort: number): Promise<TcpRelay> {
  let cut = false;
  const open = new Set<Socket>();
  const track = (s: Socket): void => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = createServer((client) => {
    track(client);
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  t.teardown(() => {
    for (const s of open) s.destroy();
    server.close();
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    cut() {
      cut = true;
      for (const s of open) s.destroy();
    },
    mend() {
      cut = false;
    },
  };
}
