// Collecting a request body within its caps: the route's byte limit (413) and the node's budget of
// buffered body bytes (503), both checked against the declared length before the first byte and
// again as chunks arrive. Chunks are copied: uWS reuses their buffer.
import type uWS from 'uWebSockets.js';
import { AppError } from '../../core/errors.js';
import type { RouteDef } from '../route.js';
import type { Answers } from './answer.js';
import type { BodyBudget } from './body-budget.js';
import type { Exchange } from './exchange.js';

export function readBody(
  res: uWS.HttpResponse,
  ex: Exchange,
  def: RouteDef,
  headers: Record<string, string>,
  maxBody: number,
  budget: BodyBudget,
  answers: Answers,
  whole: (raw: Buffer) => void,
): void {
  const declared = Number(headers['content-length'] ?? '0');
  if (declared > maxBody) {
    return void answers.fail(res, ex, new AppError('ERR_PAYLOAD_TOO_LARGE', [maxBody]), def.path, def.method, true);
  }
  // A declared length is reserved whole, up front: a body the node cannot hold is refused
  // before its first byte rather than half-way.
  if (declared > 0 && !budget.hold(ex, declared)) {
    return void answers.fail(res, ex, budget.busy(), def.path, def.method, true);
  }
  let chunks: Buffer[] | undefined = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (!chunks) return;
    size += chunk.byteLength;
    if (size > maxBody) {
      chunks = undefined;
      answers.fail(res, ex, new AppError('ERR_PAYLOAD_TOO_LARGE', [maxBody]), def.path, def.method, true);
      return;
    }
    if (size > ex.bodyBytes && !budget.hold(ex, size - ex.bodyBytes)) {
      chunks = undefined;
      answers.fail(res, ex, budget.busy(), def.path, def.method, true);
      return;
    }
    if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      chunks = undefined;
      whole(raw);
    }
  });
}
