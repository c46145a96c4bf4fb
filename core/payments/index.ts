// The configured payment gateways (config `payments`): `local` unless told otherwise, `stripe`
// when its secret key is set. A gateway named in `payments.gateways` without what it needs stops
// start-up with a message that says what is missing.
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { PaymentGateways, type PaymentGateway } from './gateway.js';
import { LocalGateway } from './local.js';
import { StripeGateway } from './stripe.js';

export * from './gateway.js';
export { LocalGateway } from './local.js';
export { StripeGateway } from './stripe.js';

export function createGateways(config: Config, store: Store, clock: Clock, logger?: Logger): PaymentGateways {
  const p = config.payments;
  const names = new Set(p.gateways);
  if (p.stripe.secretKey) names.add('stripe');
  names.add(p.defaultProcessor);
  const out: PaymentGateway[] = [];
  for (const name of names) {
    if (name === 'local') out.push(new LocalGateway(store, clock, logger));
    else if (name === 'stripe') {
      if (!p.stripe.secretKey) {
        throw new ConfigError('payment gateway "stripe" is enabled but STRIPE_SECRET_KEY (config /payments/stripe/secretKey) is not set');
      }
      out.push(new StripeGateway({ secretKey: p.stripe.secretKey, publishableKey: p.stripe.publishableKey, apiBase: p.stripe.apiBase }, store, clock, logger));
    } else throw new ConfigError(`unknown payment gateway "${name}" (config /payments/gateways): use local or stripe`);
  }
  return new PaymentGateways(out, p.defaultProcessor);
}
