// The auth feature area (spec: Authentication; Endpoints → Authentication and profile, Passcodes
// and access cards): its actors, the indexes its lookups use, its routes, the x-api-key
// credential resolver, and an hourly sweep of expired codes, challenges and refresh families.
import {
  APIKEY,
  AuthApi,
  CARD,
  CUSTOMER,
  SETTING,
  USER,
  accountsActor,
  cardActor,
  challengeActor,
  magicActor,
  orgSettingsActor,
  orgsActor,
  sweepExpired,
  refreshActor,
  resetActor,
  securityActor,
  trustedDevicesActor,
  verifyActor,
} from '../../actors/auth/index.js';
import type { Module } from '../module.js';
import { startPeriodic, stopPeriodic } from '../periodic.js';
import { appRoutes } from '../routes/auth/apps.js';
import { passcodeRoutes } from '../routes/auth/passcode.js';
import { profileRoutes } from '../routes/auth/profile.js';
import { securityRoutes } from '../routes/auth/security.js';
import { signInRoutes } from '../routes/auth/signin.js';
import { usageRoutes } from '../routes/auth/usage.js';
import { verificationRoutes } from '../routes/auth/verification.js';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export const authModule: Module = {
  name: 'auth',
  actors: [accountsActor, orgsActor, securityActor, challengeActor, magicActor, resetActor, verifyActor, refreshActor, cardActor, orgSettingsActor, trustedDevicesActor],
  indexes: [
    [USER, 'data.email'],
    [USER, 'data.employeeId'],
    [CUSTOMER, 'data.email'],
    [APIKEY, 'data.keyHash'],
    [CARD, 'data.cardUid'],
    [CARD, 'data.employeeId'],
    [SETTING, 'data.name'],
  ],
  // Passcode cards (all, of a status, of an employee) and API keys, oldest first: a page by index
  // at any size. Staff users by name are read with `data.group` not System, no equality to list by.
  listings: [
    { datatype: CARD, equals: [], sort: 'createdate' },
    { datatype: CARD, equals: ['data.status'], sort: 'createdate' },
    { datatype: CARD, equals: ['data.employeeId'], sort: 'createdate' },
    { datatype: APIKEY, equals: [], sort: 'createdate' },
  ],
  perNode(deps) {
    // The node's AuthApi (its failure limiter is per node), shared by the routes and the x-api-key
    // resolver registered here, before the node takes any request.
    const api = new AuthApi(deps);
    deps.credentials.push((headers, tenant) => api.apiKeys.resolve(headers, tenant));
    const routes = [...signInRoutes(api), ...verificationRoutes(api), ...profileRoutes(api), ...securityRoutes(api), ...passcodeRoutes(api), ...appRoutes(api), ...usageRoutes(api, deps.config)];
    return {
      // Every public authentication route (sign-in, lookup, magic code, app key, refresh, signup,
      // challenges) is also limited per client address: guessing happens before there is an org.
      routes: routes.map((r) => (r.auth === 'none' ? { ...r, rateLimit: 'address' as const } : r)),
    };
  },
  async start(deps) {
    // The sweep keeps no per-node state: it needs only the node's store, clock, tokens and settings.
    await sweepExpired(deps).catch((err: unknown) => deps.logger.warn({ err }, 'auth sweep failed'));
    startPeriodic(deps, 'auth sweep', () => sweepExpired(deps), SWEEP_EVERY_MS);
  },
  stop(deps) {
    stopPeriodic(deps, 'auth sweep');
  },
};
