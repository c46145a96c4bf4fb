// The door kit (issue 32): what a scanner app imports. See the README's "Door kit" section.
export { DoorKit, type Conflict, type DeviceInfo, type DoorKitOptions, type ScanInput, type UploadReport } from './door-kit.js';
export { KitHttpError, KitOfflineError, type Fetch, type UploadItem, type UploadResult } from './client.js';
export { JsonFileStorage, MemoryStorage, type KitStorage } from './storage.js';
export { parseSignedCode, signedMessage, verifySigned, withinWindow } from './codes.js';
export { refusal, resolveCode } from './rules.js';
export type { EventView } from './event-view.js';
export type * from './types.js';
