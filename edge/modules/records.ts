// The records feature area: the generic record store over HTTP (`/repository/*`,
// `/dynamic-query/*`), notes on reservations and customer self-service reads (`/client-data/*`).
// Routes make one call each into the area's API (actors/records/api.ts).
import { createRecordsApi, NOTE_DATATYPE, recordsActor } from '../../actors/records/index.js';
import type { Module } from '../module.js';
import { clientDataRoutes } from '../routes/records/client-data.js';
import { dynamicQueryRoutes } from '../routes/records/dynamic-query.js';
import { notesRoutes } from '../routes/records/notes.js';
import { repositoryRoutes } from '../routes/records/repository.js';

export const recordsModule: Module = {
  name: 'records',
  actors: [recordsActor],
  // The fields known datatypes are looked up by with equality, so those queries read an index
  // range instead of the whole datatype. Other areas declare their own in their modules.
  indexes: [
    ['location', 'data.name'],
    ['reservation', 'data.customerId'],
    ['ticket', 'data.event'],
    ['ticket', 'data.number'],
    ['ticket', 'data.holderEmail'],
    ['sf_order', 'data.orderNumber'],
    ['sf_order', 'data.customerId'],
    ['service_point', 'data.name'],
    ['customer', 'data.email'],
    ['user', 'data.email'],
    ['setting', 'data.name'],
    ['lead', 'data.status'],
    ['task', 'data.businessLocationId'],
    ['note', 'data.subjectId'],
  ],
  // A subject's notes, oldest first (GET /notes/:datatype/:id): a page by index at any size.
  listings: [{ datatype: NOTE_DATATYPE, equals: ['data.subjectId', 'data.subjectType'], sort: 'createdate' }],
  routes: (deps) => {
    const records = createRecordsApi(deps);
    return [
      ...repositoryRoutes(records, deps.config),
      ...dynamicQueryRoutes(records, deps.config),
      ...notesRoutes(records, deps.config),
      ...clientDataRoutes(records, deps.config),
    ];
  },
};
