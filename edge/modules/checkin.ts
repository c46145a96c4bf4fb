// The check-in feature area: the check-in queue actor (one per location) and its routes. Its tasks
// live in the workflow area (workflow `check-in`), its service points and bookings in the
// reservations area.
import { checkinQueueActor } from '../../actors/checkin-queue/index.js';
import { TASK_DATATYPE } from '../../actors/workflow/index.js';
import type { Module } from '../module.js';
import { checkinRoutes } from '../routes/checkin/index.js';

export const checkinModule: Module = {
  name: 'checkin',
  // The queue reads and moves bookings (reservations, service points) through workflow tasks.
  requires: ['reservations', 'workflow'],
  actors: [checkinQueueActor],
  // Finished check-in tasks, most recently finished first (everywhere, or at one location): a page
  // by index at any size (an unfinished task has no `finishedAt`: first, in its own status).
  listings: [
    { datatype: TASK_DATATYPE, equals: ['data.workflowId', 'data.status'], sort: 'data.finishedAt' },
    { datatype: TASK_DATATYPE, equals: ['data.workflowId', 'data.businessLocationId', 'data.status'], sort: 'data.finishedAt' },
  ],
  routes: checkinRoutes,
};
