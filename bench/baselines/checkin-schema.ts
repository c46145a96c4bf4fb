// The door-scan route's schema as the Fastify baselines declare it: the same body the service
// validates (edge/routes/events/scanning.ts) and a response schema for fast serialization.
const record = { type: 'object', additionalProperties: true, properties: { data: { type: 'object', additionalProperties: true } } };

export const checkinSchema = {
  body: {
    type: 'object',
    required: ['code'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', minLength: 1, maxLength: 512 },
      zone: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$' },
      eventId: { type: 'string', minLength: 1, maxLength: 80 },
      checkpoint: { type: 'string', maxLength: 64 },
      nonce: { type: 'string', maxLength: 128 },
      scannedAt: { type: 'string' },
      deviceId: { type: 'string', maxLength: 128 },
    },
  },
  response: {
    200: { type: 'object', properties: { success: { type: 'boolean' }, reason: { type: 'string' }, ticket: record } },
  },
};
