// Cluster mode: the answer to a request another node forwarded here, collected instead of written
// to a socket. The owner serves a forwarded request through the same pipeline as one of its own
// (edge/http-server.ts), and that pipeline writes through the few calls of uWS's response this
// class takes: so the forwarded answer carries exactly the bytes a direct one would (status line,
// request id, CORS, the standard headers) without a second HTTP parse over loopback.
import type uWS from 'uWebSockets.js';
import type { ForwardedResponse } from '../cluster-forward.js';

type Bytes = uWS.RecognizedString;

function text(v: Bytes): string {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('latin1');
  if (ArrayBuffer.isView(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1');
  return Buffer.from(v).toString('latin1');
}

function body(v: Bytes | undefined): Uint8Array {
  if (v === undefined) return new Uint8Array(0);
  if (typeof v === 'string') return Buffer.from(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  return new Uint8Array(v);
}

export class CapturedAnswer {
  private status = 502;
  private readonly headers: Array<[string, string]> = [];
  private settle!: (a: ForwardedResponse) => void;
  /** Resolves when the pipeline has ended the answer. */
  readonly answer = new Promise<ForwardedResponse>((resolve) => {
    this.settle = resolve;
  });

  /** The pipeline's view of it: the subset of uWS's response it calls on a non-streamed answer. */
  get response(): uWS.HttpResponse {
    return this as unknown as uWS.HttpResponse;
  }

  cork(cb: () => void): this {
    cb();
    return this;
  }

  writeStatus(status: Bytes): this {
    this.status = Number.parseInt(text(status), 10);
    return this;
  }

  writeHeader(key: Bytes, value: Bytes): this {
    this.headers.push([text(key).toLowerCase(), text(value)]);
    return this;
  }

  end(data?: Bytes): this {
    this.settle({ status: this.status, headers: this.headers, body: body(data) });
    return this;
  }

  endWithoutBody(): this {
    return this.end();
  }

  /** A forwarded exchange is never aborted here: the forwarding node answers its own client. */
  onAborted(): this {
    return this;
  }
}
