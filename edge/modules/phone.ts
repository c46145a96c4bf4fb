// The phone feature area (spec: Endpoints → Phone (staff)): softphone devices with heartbeats,
// voice access tokens, numbers, the system summary, and the provider webhooks for inbound SMS
// and calls. The voice provider is built per node from config `voice`.
import { createPhoneApi, PHONE_DEVICE, phoneCallActor, phoneDeviceActor, phoneNumberActor } from '../../actors/phone/index.js';
import { createInboxApi } from '../../actors/inbox/index.js';
import { createVoiceProvider } from '../../core/voice.js';
import type { AppDeps } from '../deps.js';
import type { Module } from '../module.js';
import { inboundRoutes } from '../routes/phone/inbound.js';
import { phoneRoutes } from '../routes/phone/voice.js';

export const phoneModule: Module = {
  name: 'phone',
  // Inbound SMS and calls land in the inbox, whose actor the crm module runs.
  requires: ['crm'],
  actors: [phoneDeviceActor, phoneCallActor, phoneNumberActor],
  indexes: [[PHONE_DEVICE, 'data.email']],
  routes(deps: AppDeps) {
    const voice = createVoiceProvider(deps.config, deps.logger, deps.clock);
    const phone = createPhoneApi(deps);
    return [...phoneRoutes(phone, voice), ...inboundRoutes(phone, createInboxApi(deps))];
  },
};
