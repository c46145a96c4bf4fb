import t from 'tap';
import { compileRoute } from '../../edge/compile.js';
import { startTestApp } from '../helpers/app.js';

// Routes compile their validators and serializer on first use (edge/compile.ts), so a schema that
// ajv or fast-json-stringify refuses would show only at its route's first request: compile them all.
t.test('compileRoute - every route of a node with every module compiles its params, query, body and response', async (t) => {
  const app = await startTestApp(t);
  const routes = app.deps.routes;
  t.ok(routes.length > 100, `the node has its whole route table (${routes.length} routes)`);
  const refused: string[] = [];
  for (const def of routes) {
    const compiled = compileRoute(def);
    try {
      void compiled.params;
      void compiled.query;
      void compiled.body;
      if (typeof compiled.serialize !== 'function') refused.push(`${def.method} ${def.path}: no serializer`);
    } catch (err) {
      refused.push(`${def.method} ${def.path}: ${(err as Error).message}`);
    }
  }
  t.same(refused, [], 'no route schema is refused');
});
