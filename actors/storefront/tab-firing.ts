// Firing: the lines of a tab not yet sent to the kitchen become one task of the kitchen workflow.
import { createHash } from 'node:crypto';
import { askerOf } from '../../core/actor/asker.js';
import { appError } from '../../core/errors.js';
import { QTY_SCALE } from '../../core/money.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { createTask, KITCHEN_WORKFLOW } from '../workflow/index.js';
import type { FireReply } from './messages.js';
import { SPLIT } from './order.js';
import { type Ctx, label, loadOrder, pointIdOf, pointNameOf, presented, save } from './tab-state.js';

export async function fire(c: Ctx, orderId: string, by: string | undefined): Promise<FireReply> {
  const o = loadOrder(c, orderId);
  if (o.status === SPLIT) throw appError('ERR_CONFLICT', `cannot fire order ${label(o)}: it was split; fire the new tabs`);
  // spec: States and transitions → order line: lines that already have a taskId are dropped.
  const unfired = o.lines.filter((l) => !l.taskId);
  if (unfired.length === 0) return { order: presented(o), task: null, fired: 0 };
  const ids = unfired.map((l) => l.lineId);
  // The same set of lines always maps to the same live task, so a fire retried after a failure
  // between the task and the order write finds that task instead of making a second one.
  const digest = createHash('sha256').update(ids.join('\u0000')).digest('base64url').slice(0, 22);
  const summary = unfired.map((l) => `${l.quantity / QTY_SCALE} × ${l.name}`).join(', ');
  const task = await createTask(askerOf(c.actor), c.actor.tenant, {
    workflowId: KITCHEN_WORKFLOW,
    title: `${label(o)} ${String(o.rec.data.tabLabel ?? '')}: ${summary}`.slice(0, 200),
    orderId: o.rec.sk,
    ...(unfired.length === 1 ? { lineId: unfired[0].lineId } : {}),
    businessLocationId: c.state.slug,
    ...(pointIdOf(o) ? { servicePointId: pointIdOf(o) } : {}),
    ...(pointNameOf(o) ? { servicePointName: pointNameOf(o) } : {}),
    uniqueKey: `order:${o.rec.sk}:fire:${digest}`,
    payload: {
      orderNumber: o.rec.data.orderNumber,
      lineIds: ids,
      lines: unfired.map((l) => ({
        lineId: l.lineId,
        ...(l.productId ? { productId: l.productId } : {}),
        name: l.name,
        quantity: l.quantity / QTY_SCALE,
        modifiers: l.modifiers.map((m) => m.name),
        ...(l.notes ? { notes: l.notes } : {}),
      })),
    },
    ...(by ? { by } : {}),
  });
  for (const l of unfired) {
    l.taskId = task.sk;
    l.firedAt = c.iso;
  }
  const order = save(c, o);
  queueEvent(c.actor.services.webhooks, c.actor.batch, c.actor.tenant, 'order.fired', order, c.now);
  return { order, task, fired: unfired.length };
}
