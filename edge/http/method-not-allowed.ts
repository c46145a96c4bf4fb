// 405 with `Allow` for a known path asked with a method it does not serve.
import type uWS from 'uWebSockets.js';
import { AppError } from '../../core/errors.js';
import type { Method, RouteDef } from '../route.js';
import type { Answers } from './answer.js';

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * A known path asked with a method it does not serve answers 405 with `Allow`, instead of
 * falling through to a parametric route of that method (`GET /events/checkin` would otherwise
 * reach `GET /events/:id`) or to the 404. Paths are grouped by shape, so `/x/:id` and `/x/:name`
 * are one path.
 */
export function registerMethodNotAllowed(app: uWS.TemplatedApp, routes: readonly RouteDef[], answers: Answers): void {
  const byShape = new Map<string, { path: string; methods: Set<string>; stream: boolean }>();
  for (const def of routes) {
    const shape = def.path.replace(/:[^/]+/g, ':');
    let entry = byShape.get(shape);
    if (!entry) byShape.set(shape, (entry = { path: def.path, methods: new Set(), stream: false }));
    entry.methods.add(def.method);
    if (def.method === 'GET' && def.stream) entry.stream = true;
  }
  for (const { path, methods, stream } of byShape.values()) {
    const allowed = [...methods];
    if (methods.has('GET') && !stream) allowed.push('HEAD');
    allowed.push('OPTIONS');
    const allow = allowed.join(', ');
    const refuse = (res: uWS.HttpResponse, req: uWS.HttpRequest) => {
      const ex = answers.exchanges.begin(res, req);
      const err = new AppError('ERR_METHOD_NOT_ALLOWED', [ex.method, path, allow], { headers: { allow } });
      answers.fail(res, ex, err, path, ex.method);
    };
    for (const m of METHODS) {
      if (methods.has(m)) continue;
      if (m === 'GET') app.get(path, refuse);
      else if (m === 'POST') app.post(path, refuse);
      else if (m === 'PUT') app.put(path, refuse);
      else if (m === 'PATCH') app.patch(path, refuse);
      else app.del(path, refuse);
    }
    if (!methods.has('GET') || stream) app.head(path, refuse);
  }
}
