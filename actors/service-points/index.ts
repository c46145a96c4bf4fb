// The service-points area's public surface (the storefront writes point status through it).
export { BUSY_STATUSES, OCCUPIED, SERVICE_POINT_DATATYPE, isBusy, servicePointsActor } from './actor.js';
export { SERVICE_POINTS_ACTOR, type OccupyReply, type ReleaseReply, type ServicePointMessage } from './messages.js';
export {
  askServicePoints,
  locationOfPoint,
  occupyServicePoint,
  releaseServicePoint,
  setServicePointStatus,
  type PointDeps,
} from './client.js';
export { createServicePointsApi, type ServicePointsApi, type ServicePointsParts } from './api.js';
