// The auth area's public surface (spec: Authentication; Passcodes and access cards): its API, its
// actors, the model its records follow, and the messages the edge may still send its actors.
export { AuthApi } from './api.js';
export { sweepExpired } from './sweep.js';
export type { AuthDeps } from './deps.js';
export { deviceOf, type ClientInfo } from './client-info.js';
export type { Subject } from './account-lookup.js';
export type { SessionAnswer } from './sessions.js';
export { challengeMessage, type ChallengeAnswer } from './challenges.js';
export type { PasscodeSettings } from './passcodes.js';
export { LOCAL_CODES_FILE } from './code-sender.js';
export { FORGOT_MESSAGE } from './recovery.js';
export type { VerificationSent } from './email-verification.js';
export { BACKUP_CODE_COUNT, type TrustedDevice, type TwoFactorStatus } from './two-factor.js';
export * from './model.js';
export { accountsActor, orgsActor } from './accounts-actor.js';
export { ACCOUNTS, type AccountsMsg, ORG_SETTINGS_ACTOR, ORGS, type OrgSettingsMsg, SECURITY_ACTOR, type SecurityMsg, TRUSTED_DEVICES_ACTOR } from './messages.js';
export { cardActor } from './card-actor.js';
export { challengeActor, magicActor, resetActor, verifyActor } from './codes-actor.js';
export { orgSettingsActor, securitySettingsOf } from './org-settings-actor.js';
export { refreshActor } from './refresh-actor.js';
export { securityActor } from './security-actor.js';
export { trustedDevicesActor } from './trusted-devices-actor.js';
export type { DirectoryOrg, OrgUsage } from './org-directory.js';
export type { EmployeeView } from './staff-accounts.js';
export { OUTBOX_JOB, type OutboxRead } from './outbox-job.js';
export { accountOf } from './outbox-view.js';
export { customerIdsOf, provenEmailOf } from './email-proof.js';
