// The node's budget of buffered request-body bytes: a request holds its bytes from the first one
// it declares or receives until its exchange ends, and one the budget cannot hold is answered 503.
import { AppError } from '../../core/errors.js';

/** What a request holds against the budget (its exchange). */
export interface BodyHolder {
  bodyBytes: number;
}

export class BodyBudget {
  /** Bytes of request bodies buffered on this node now. */
  bytes = 0;

  constructor(readonly max: number) {}

  /** Takes `n` more body bytes for `holder`; false when the budget cannot hold them. */
  hold(holder: BodyHolder, n: number): boolean {
    if (this.bytes + n > this.max) return false;
    this.bytes += n;
    holder.bodyBytes += n;
    return true;
  }

  release(holder: BodyHolder): void {
    if (holder.bodyBytes > 0) {
      this.bytes -= holder.bodyBytes;
      holder.bodyBytes = 0;
    }
  }

  busy(): AppError {
    const retry = 1;
    return new AppError('ERR_BUSY', [this.max, retry], { headers: { 'retry-after': String(retry) } });
  }
}
