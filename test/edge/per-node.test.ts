import { Type } from '@sinclair/typebox';
import t from 'tap';
import type { Module } from '../../edge/module.js';
import { route } from '../../edge/route.js';
import { startTestApp } from '../helpers/app.js';

/** A module whose part of each node counts the requests that node served and says when it stopped. */
function countingModule(stopped: number[]): Module {
  return {
    name: 'counting',
    perNode() {
      let served = 0;
      return {
        routes: [
          route({
            method: 'GET',
            path: '/counted',
            auth: 'none',
            tenant: 'none',
            tag: 'Operations',
            summary: 'Counts',
            response: Type.Object({ served: Type.Number() }),
            handler: () => ({ served: ++served }),
          }),
        ],
        stop: () => void stopped.push(served),
      };
    },
  };
}

t.test('Module perNode - each node of a process keeps its own state, stopped with that node', async (t) => {
  const stopped: number[] = [];
  const mod = countingModule(stopped);
  const a = await startTestApp(t, { modules: [mod] });
  const b = await startTestApp(t, { modules: [mod] });
  const get = async (url: string) => ((await (await fetch(`${url}/counted`)).json()) as { served: number }).served;
  t.equal(await get(a.url), 1);
  t.equal(await get(a.url), 2);
  t.equal(await get(b.url), 1, 'the second node counts its own');
  await a.close();
  t.same(stopped, [2], 'only the closed node stopped, with its own state');
  await b.close();
  t.same(stopped, [2, 1]);
});
