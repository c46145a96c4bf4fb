// The event's door keys (issue 32): the Ed25519 public keys a scanner device checks ticket codes
// with when the network is gone, and their rotation. Keys are made, kept and used by the event's
// scanner actor (actors/scanner/door-keys.ts); a private key is in no answer.
import { Type } from '@sinclair/typebox';
import type { EventsApi } from '../../../actors/events/index.js';
import { MAX_DOOR_KEYS, type DoorKeysReply } from '../../../actors/scanner/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { doorFree } from './door-wait.js';
import { EventParams } from './schemas.js';

// With enrolment: what a scanner device is set up with.
const TAG = 'Scanner devices';

const DoorKey = Type.Object({
  kid: Type.String({ description: 'Key id: the first 8 characters of every signature made with the key' }),
  alg: Type.Literal('Ed25519'),
  publicKey: Type.String({ description: 'The raw 32-byte Ed25519 public key, base64url (JWK `x`)' }),
  createdAt: Type.String({ format: 'date-time' }),
  retiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a rotation replaced it; null for the active key' }),
});

const DoorKeys = Type.Object({
  eventId: Type.String(),
  activeKid: Type.String({ description: 'The key that signs new codes' }),
  keys: Type.Array(DoorKey, { description: 'Newest first: the active key, then the retired ones still listed' }),
});

const VERIFY_DOC =
  'To check a code offline: take the key whose `kid` is the signature\'s first 8 characters (none listed: refuse), ' +
  'base64url-decode the other 86 into the 64-byte signature and verify it with the key over the UTF-8 text ' +
  '`ticketId:timestamp:codeTag` (a dynamic code) or `ticketId:S:codeTag` (a static code), `codeTag` being the ticket\'s ' +
  'in the door feed; a dynamic code must also be within the event\'s `codeWindowSeconds` (± `codeSkewSeconds`).';

const ROTATION_DOC =
  'A rotation makes a new active key; the retired key stays listed and keeps verifying, because a static code signed ' +
  'with it lives as long as its ticket (a QR request signs the static code again with the active key, so holders ' +
  `who refresh move to it). An event keeps at most ${MAX_DOOR_KEYS} keys: a rotation at the bound drops the oldest ` +
  'retired key, whose remaining static codes then stop verifying (their holders fetch the QR again), and is refused ' +
  '(409) while that key\'s dynamic codes may still be live (retired less than the event\'s code window + skew ago).';

export function doorKeyRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  // No route here reads a ticket record: none waits for the door's backlog.
  return [
    doorFree(route({
      method: 'GET',
      path: '/events/:id/door-keys',
      auth: 'staff',
      tag: TAG,
      summary: 'The public keys that sign the event\'s ticket codes',
      description:
        'The Ed25519 public keys of the event\'s QR codes (`GET /events/tickets/:id/qr`), for a scanner that checks codes ' +
        'without the network: `activeKid` signs new codes, the retired keys listed still verify the codes they signed. The ' +
        'event\'s first key is made on first need. An enrolled scanner device may call it for its events (403 for ' +
        'another). Private keys never leave the server. ' +
        VERIFY_DOC +
        ' ' +
        ROTATION_DOC,
      params: EventParams,
      response: DoorKeys,
      errors: [404],
      device: true,
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        svc.deviceMay(ctx.principal!.device, ev);
        return svc.scanner<DoorKeysReply>(ctx.tenant, ev.sk, { type: 'door-keys' });
      },
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/:id/door-keys/rotate',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Rotate the event\'s door key (Admin)',
      description:
        'Answers the keys as `GET /events/:id/door-keys` does, with the new active key first. Codes handed out from now ' +
        'on are signed with it; scanner devices should fetch the keys again. ' +
        ROTATION_DOC,
      params: EventParams,
      response: DoorKeys,
      errors: [404, 409],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        return svc.scanner<DoorKeysReply>(ctx.tenant, ev.sk, { type: 'door-keys-rotate' });
      },
    })),
  ];
}
