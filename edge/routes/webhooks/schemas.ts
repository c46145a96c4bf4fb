// The shapes of the webhook routes' bodies and answers.
import { Type } from '@sinclair/typebox';

export const HEX24 = '^[0-9a-f]{24}$';
export const EndpointParams = Type.Object({ id: Type.String({ pattern: HEX24, description: 'Endpoint id' }) });
export const DeliveryParams = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{48}$', description: 'Delivery id (its event id, then its endpoint id)', example: '6650f1c2a9e5b7d4c1e9a0b26650f1c2a9e5b7d4c1e9a0b3' }),
});

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// URL the events are POSTed to' });
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 100,
  description: 'Event names of the catalogue, or `["*"]` for every event',
});
const Description = Type.String({ maxLength: 500 });

export const CreateBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

const endpointFields = {
  id: Type.String(),
  url: Type.String({ description: 'As set, with a password it carries shown as `***`' }),
  events: Type.Array(Type.String()),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String({ description: 'Set when the server disabled the endpoint (failing for too long)' })),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  previousSecretExpiresAt: Nullable(Type.String({ description: 'After a rotation: until when the previous secret still signs beside the new one' })),
};

export const EndpointSchema = Type.Object(endpointFields);
export const EndpointWithSecret = Type.Object({
  ...endpointFields,
  secret: Type.String({ description: 'The signing secret (`whsec_…`), shown this once' }),
});

export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'For POST /webhooks/deliveries/:id/retry' }),
  eventId: Type.String({ description: 'The event id: the payload\'s `id` and the `webhook-id` header, the same on every attempt' }),
  endpointId: Type.String(),
  type: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status; null when no answer came" }),
  lastError: Nullable(Type.String()),
  durationMs: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's duration" }),
  createdAt: Type.String(),
  lastAttemptAt: Nullable(Type.String()),
  nextAttemptAt: Nullable(Type.String({ description: 'While pending: when it is tried next' })),
});

export const DeliveryPage = Type.Object({
  data: Type.Array(DeliverySchema),
  next: Nullable(Type.String({ description: 'Send it back as `after` for the next page; null at the end' })),
});

export const DeliveryQuery = Type.Object({
  after: Type.Optional(Type.String({ pattern: HEX24 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Page size (default 50)' })),
});
