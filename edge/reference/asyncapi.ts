// The socket channels as an AsyncAPI 3.0 document (/asyncapi.json), generated from the event
// tables the server runs (edge/sockets/chat-events.ts, community-events.ts: one entry per event,
// both directions, with its payload and, for client events, its ack and who may send it) and the
// handshake schemas, so an event the server handles or sends cannot be missing here.
import { type TSchema } from '@sinclair/typebox';
import type { Config } from '../../core/config.js';
import { chatEvents } from '../sockets/chat-events.js';
import { communityEvents } from '../sockets/community-events.js';
import { clientEvents, type EventDef } from '../sockets/events.js';
import { ChatHandshake, CommunityHandshake, Refusal } from '../sockets/schemas.js';

type Json = Record<string, unknown>;
export type Namespace = 'chat' | 'community';

export const NAMESPACES: Record<Namespace, { address: string; title: string; description: string }> = {
  chat: {
    address: '/chat',
    title: 'Live chat',
    description:
      'Customers chat with agents (staff tokens, role User). A customer socket gets `authenticate` with its chat once set up; ' +
      'an agent socket joins the staff room (queue, presence, SMS) and the chats assigned to it.',
  },
  community: {
    address: '/community-chat',
    title: 'Community chat',
    description: 'Members of an organisation message each other directly or in groups, see who is online and who is typing.',
  },
};

/** Every event of each namespace, as the server runs them. */
export function eventTables(config: Config): Record<Namespace, EventDef[]> {
  return { chat: chatEvents(config.chat), community: communityEvents(config.chat) };
}

/** The client events the server handles, with their payload schemas. */
export function handledEvents(config: Config): Record<Namespace, Record<string, TSchema>> {
  const tables = eventTables(config);
  const out = {} as Record<Namespace, Record<string, TSchema>>;
  for (const ns of Object.keys(tables) as Namespace[]) out[ns] = Object.fromEntries(clientEvents(tables[ns]).map((e) => [e.name, e.payload]));
  return out;
}

const plain = (s: TSchema): Json => JSON.parse(JSON.stringify(s)) as Json;
const HANDSHAKE: Record<Namespace, TSchema> = { chat: ChatHandshake, community: CommunityHandshake };
const WHO = { agents: 'agents', customers: 'customers' } as const;

export function buildAsyncApi(config: Config, host: string, secure: boolean): Json {
  const tables = eventTables(config);
  const channels: Json = {};
  const operations: Json = {};
  const messages: Json = {};
  const schemas: Json = {};
  for (const ns of Object.keys(NAMESPACES) as Namespace[]) {
    const n = NAMESPACES[ns];
    const handshake = `${ns}Handshake`;
    schemas[handshake] = { ...plain(HANDSHAKE[ns]), description: 'The Socket.IO handshake `auth` object: an access token and the organisation it belongs to' };
    const channelMessages: Json = {};
    const add = (id: string, m: Json) => {
      messages[id] = m;
      channelMessages[id] = { $ref: `#/components/messages/${id}` };
    };
    for (const e of clientEvents(tables[ns])) {
      const event = e.name;
      const id = `${ns}.${event}`;
      const who = e.access ? WHO[e.access] : undefined;
      add(id, { name: event, title: event, summary: e.summary, description: `Sent by the client; the server answers through the ack.${who ? ` Only ${who} may send it.` : ''}`, payload: plain(e.payload) });
      add(`${id}.ack`, {
        name: `${event} ack`,
        title: `${event} ack`,
        summary: `What the ack of ${event} receives`,
        payload: { anyOf: [plain(e.ack), plain(Refusal)] },
      });
      operations[`${ns}.receive.${event}`] = {
        action: 'receive',
        channel: { $ref: `#/channels/${ns}` },
        title: event,
        summary: e.summary,
        messages: [{ $ref: `#/channels/${ns}/messages/${id}` }],
        reply: { channel: { $ref: `#/channels/${ns}` }, messages: [{ $ref: `#/channels/${ns}/messages/${id}.ack` }] },
        ...(who ? { 'x-who': who } : {}),
      };
    }
    for (const e of tables[ns].filter((x) => x.direction === 'out')) {
      const event = e.name;
      const id = `${ns}.${event}.out`;
      add(id, { name: event, title: event, summary: e.summary, payload: plain(e.payload) });
      operations[`${ns}.send.${event}`] = {
        action: 'send',
        channel: { $ref: `#/channels/${ns}` },
        title: event,
        summary: e.summary,
        messages: [{ $ref: `#/channels/${ns}/messages/${id}` }],
      };
    }
    channels[ns] = {
      address: n.address,
      title: n.title,
      description:
        `${n.description}\n\nConnect with Socket.IO v4 to the namespace \`${n.address}\` with ` +
        '`auth: {token, orgId}` (see `x-handshake`). A refused handshake is a `connect_error` whose `data` is the error envelope. ' +
        'Every client event takes an ack: it receives the result, or `{error: {statusCode, message, error}}`; without an ack a refusal arrives as the `error` event. ' +
        "Every client event is charged to the organisation's rate limit, the same bucket as its HTTP requests: past it the event is refused with 429 and the connection stays.",
      messages: channelMessages,
      'x-handshake': { $ref: `#/components/schemas/${handshake}` },
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Business Platform API: socket channels',
      version: '0.1.0',
      description:
        'The realtime channels, over Socket.IO v4 (path `/socket.io`). Every event name, in both directions, with its payload and, for client events, its ack. ' +
        'The REST API is described in OpenAPI at [/openapi.json](/openapi.json); the reference is at [/documentation](/documentation#/channels).',
      externalDocs: { description: 'The REST API (OpenAPI 3.1)', url: `${secure ? 'https' : 'http'}://${host}/openapi.json` },
    },
    defaultContentType: 'application/json',
    servers: {
      origin: {
        host,
        protocol: secure ? 'wss' : 'ws',
        pathname: '/socket.io',
        description: 'This server (Socket.IO v4: the WebSocket transport, or long polling first)',
      },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}

/** The channels in Markdown (/documentation/channels.md), read from the AsyncAPI document. */
export function channelsMd(doc: Json): string {
  type Msg = { name: string; summary?: string; payload?: Json };
  const msgs = (doc.components as { messages: Record<string, Msg> }).messages;
  const ops = Object.values(doc.operations as Record<string, { action: string; channel: { $ref: string }; messages: Array<{ $ref: string }>; reply?: { messages: Array<{ $ref: string }> } }>);
  const fields = (p: Json | undefined) => Object.keys((p?.properties as Json | undefined) ?? {}).map((k) => `\`${k}\``).join(', ') || '—';
  const msgOf = (ref: string) => msgs[ref.split('/').pop()!];
  const out = ['# Socket channels', '', String((doc.info as Json).description), '', 'The same, machine-readable: [/asyncapi.json](/asyncapi.json) (AsyncAPI 3.0).', ''];
  for (const [key, ch] of Object.entries(doc.channels as Record<string, Json>)) {
    out.push(`## ${String(ch.address)}: ${String(ch.title)}`, '', String(ch.description), '');
    const hs = (doc.components as { schemas: Record<string, Json> }).schemas[`${key}Handshake`];
    out.push(`Handshake \`auth\`: ${fields(hs)} (required: ${((hs.required as string[]) ?? []).map((r) => `\`${r}\``).join(', ')}).`, '');
    out.push('### Client → server', '', '| Event | Payload fields | Ack | What it does |', '|---|---|---|---|');
    for (const op of ops.filter((o) => o.action === 'receive' && o.channel.$ref.endsWith(`/${key}`))) {
      const m = msgOf(op.messages[0].$ref);
      const ack = op.reply ? msgOf(op.reply.messages[0].$ref) : undefined;
      const ackFields = ack ? fields(((ack.payload?.anyOf as Json[] | undefined) ?? [])[0]) : '—';
      out.push(`| \`${m.name}\` | ${fields(m.payload)} | ${ackFields} or \`{error}\` | ${m.summary ?? ''} |`);
    }
    out.push('', '### Server → client', '', '| Event | Payload fields | When |', '|---|---|---|');
    for (const op of ops.filter((o) => o.action === 'send' && o.channel.$ref.endsWith(`/${key}`))) {
      const m = msgOf(op.messages[0].$ref);
      out.push(`| \`${m.name}\` | ${fields(m.payload)} | ${m.summary ?? ''} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
