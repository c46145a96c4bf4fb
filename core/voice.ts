// Voice provider: access tokens for softphones. Tokens have the voice provider's access-token
// format (a JWT whose header carries `cty: twilio-fpa;v=1`, issued by an API key SID for an account
// SID, with `grants.identity` and a `grants.voice` grant), signed locally with the API key secret:
// issuing one never calls the provider.
//
// Two providers sit behind one interface. `twilio` uses the configured account, API key and
// application. `local` works offline: it generates an account SID, API key SID, application SID and
// secret once, keeps them in `<dataDir>/voice-local.json` (mode 600) so tokens stay verifiable
// across restarts, and says in the log that its tokens are not accepted by the real provider.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';

/** The content type the provider's SDKs expect in an access token's header. */
export const ACCESS_TOKEN_CTY = 'twilio-fpa;v=1';

export interface VoiceGrant {
  incoming: { allow: boolean };
  outgoing?: { application_sid: string; params?: Record<string, string> };
  push_credential_sid?: string;
}

/** The payload of an access token as the provider defines it. */
export interface AccessTokenClaims {
  jti: string;
  iss: string;
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  grants: { identity: string; voice: VoiceGrant };
}

export interface IssuedVoiceToken {
  token: string;
  identity: string;
  /** ISO 8601 UTC. */
  expiresAt: string;
  ttlSeconds: number;
}

/** What `/phone/system` may show: identifiers and settings, never a secret. */
export interface VoiceSummary {
  provider: 'local' | 'twilio';
  accountSid: string;
  apiKeySid: string;
  outgoingApplicationSid: string | null;
  pushCredentialSid: string | null;
  tokenTtlSeconds: number;
  /** Whether tokens are accepted by the real provider (false for `local`). */
  live: boolean;
}

export interface VoiceProvider {
  readonly name: 'local' | 'twilio';
  accessToken(identity: string, opts?: { incoming?: boolean; ttlSeconds?: number }): IssuedVoiceToken;
  summary(): VoiceSummary;
}

export interface VoiceCredentials {
  accountSid: string;
  apiKeySid: string;
  apiKeySecret: string;
  outgoingApplicationSid: string | null;
  pushCredentialSid: string | null;
}

/** Signs access tokens in the provider's format with an API key secret. */
export class AccessTokenVoiceProvider implements VoiceProvider {
  constructor(
    readonly name: 'local' | 'twilio',
    private readonly creds: VoiceCredentials,
    private readonly ttlSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {}

  accessToken(identity: string, opts: { incoming?: boolean; ttlSeconds?: number } = {}): IssuedVoiceToken {
    const ttl = opts.ttlSeconds ?? this.ttlSeconds;
    const now = Math.floor(this.clock.now() / 1000);
    const voice: VoiceGrant = { incoming: { allow: opts.incoming ?? true } };
    if (this.creds.outgoingApplicationSid) voice.outgoing = { application_sid: this.creds.outgoingApplicationSid };
    if (this.creds.pushCredentialSid) voice.push_credential_sid = this.creds.pushCredentialSid;
    const claims: AccessTokenClaims = {
      // The token id has the provider's shape: `<API key SID>-<issued at>`.
      jti: `${this.creds.apiKeySid}-${now}`,
      iss: this.creds.apiKeySid,
      sub: this.creds.accountSid,
      iat: now,
      nbf: now,
      exp: now + ttl,
      grants: { identity, voice },
    };
    const token = jwt.sign(claims, this.creds.apiKeySecret, {
      algorithm: 'HS256',
      header: { alg: 'HS256', typ: 'JWT', cty: ACCESS_TOKEN_CTY },
    });
    return { token, identity, expiresAt: new Date((now + ttl) * 1000).toISOString(), ttlSeconds: ttl };
  }

  summary(): VoiceSummary {
    return {
      provider: this.name,
      accountSid: this.creds.accountSid,
      apiKeySid: this.creds.apiKeySid,
      outgoingApplicationSid: this.creds.outgoingApplicationSid,
      pushCredentialSid: this.creds.pushCredentialSid,
      tokenTtlSeconds: this.ttlSeconds,
      live: this.name !== 'local',
    };
  }
}

export const LOCAL_VOICE_FILE = 'voice-local.json';

const sid = (prefix: string) => prefix + randomBytes(16).toString('hex');

/** The local provider's generated credentials: read from dataDir, created on first use. */
export function localVoiceCredentials(dataDir: string): VoiceCredentials {
  const file = join(dataDir, LOCAL_VOICE_FILE);
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as VoiceCredentials;
    if (c.accountSid && c.apiKeySid && c.apiKeySecret) return { ...c, pushCredentialSid: c.pushCredentialSid ?? null };
  } catch {
    // absent (first start) or unreadable: generate below
  }
  mkdirSync(dataDir, { recursive: true });
  const creds: VoiceCredentials = {
    accountSid: sid('AC'),
    apiKeySid: sid('SK'),
    apiKeySecret: randomBytes(32).toString('base64url'),
    outgoingApplicationSid: sid('AP'),
    pushCredentialSid: null,
  };
  try {
    writeFileSync(file, JSON.stringify(creds, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
    return creds;
  } catch {
    // Another process of the same data directory wrote it first: use theirs.
    return JSON.parse(readFileSync(file, 'utf8')) as VoiceCredentials;
  }
}

/** Builds the configured provider. */
export function createVoiceProvider(config: Config, logger?: Logger, clock: Clock = systemClock): VoiceProvider {
  const v = config.voice;
  if (v.provider === 'twilio') {
    if (!v.accountSid || !v.apiKeySid || !v.apiKeySecret) {
      throw new Error('voice provider "twilio" needs voice.accountSid, voice.apiKeySid and voice.apiKeySecret');
    }
    return new AccessTokenVoiceProvider(
      'twilio',
      {
        accountSid: v.accountSid,
        apiKeySid: v.apiKeySid,
        apiKeySecret: v.apiKeySecret,
        outgoingApplicationSid: v.outgoingApplicationSid,
        pushCredentialSid: v.pushCredentialSid,
      },
      v.tokenTtlSeconds,
      clock,
    );
  }
  const creds = localVoiceCredentials(config.dataDir);
  logger?.info(
    `voice provider is "local": access tokens are signed with the secret in ${join(config.dataDir, LOCAL_VOICE_FILE)} and are not accepted by the real provider`,
  );
  return new AccessTokenVoiceProvider('local', creds, v.tokenTtlSeconds, clock);
}

/** The voice identity bound to a staff user's devices (spec: Phone → `user:<orgId>:<email>`). */
export function voiceIdentity(orgId: string, email: string): string {
  return `user:${orgId}:${email.trim().toLowerCase()}`;
}
