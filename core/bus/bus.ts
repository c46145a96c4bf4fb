// The bus: how actors, nodes and the edge talk. Two implementations sit behind this one
// interface (in-process and NATS), and one contract suite (test/bus/contract.ts) runs
// against both, so code above it never knows which one it has.
//
// Subjects are dot-separated tokens with NATS wildcard rules: `*` matches exactly one token,
// `>` (last token only) matches one or more. Payloads are plain JSON-compatible values, and they
// are always copied through JSON (a Date arrives as a string), in-process as well.
//
// Errors: a bad subject throws InvalidSubjectError (a TypeError: a programming error). An ask
// rejects with AppError ERR_UNAVAILABLE (no responder, or the bus is closed), ERR_TIMEOUT, or the
// responder's own AppError; any other responder failure arrives as ERR_INTERNAL, never a stack.

export type Unsubscribe = () => void;

/** Answers an `ask`. A thrown error reaches the asker as a rejected promise (an AppError). */
export type Responder = (msg: unknown, subject: string) => unknown | Promise<unknown>;

/** Receives a published event. Errors it throws are logged, never reach the publisher. */
export type Listener = (event: unknown, subject: string) => void;

export interface AskOptions {
  /** Milliseconds before the ask fails with AppError ERR_TIMEOUT. Default 5000. */
  timeoutMs?: number;
}

export interface Bus {
  /** Request/reply to the one responder of `subject` (if several match, exactly one answers). */
  ask<R = unknown>(subject: string, msg: unknown, opts?: AskOptions): Promise<R>;
  /** Become the responder for `subject` (wildcards allowed). */
  respond(subject: string, responder: Responder): Unsubscribe;
  /** Fire-and-forget to every subscriber whose pattern matches `subject`. */
  publish(subject: string, event: unknown): void;
  subscribe(pattern: string, listener: Listener): Unsubscribe;
  /**
   * Resolves once everything published so far has been handed to the transport. Over NATS it is
   * a server round trip, so after `subscribe`/`respond` it also means the server knows them.
   */
  flush(): Promise<void>;
  /** Delivers what was already published, lets running responders reply, then refuses work. */
  close(): Promise<void>;
}
