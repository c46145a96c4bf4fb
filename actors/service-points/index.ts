// The service-points area's public surface (the storefront writes point status through it).
export {
  BUSY_STATUSES,
  OCCUPIED,
  SERVICE_POINT_DATATYPE,
  SERVICE_POINTS_ACTOR,
  isBusy,
  servicePointsActor,
  type OccupyReply,
  type ReleaseReply,
  type ServicePointMessage,
} from './actor.js';
export {
  askServicePoints,
  locationOfPoint,
  occupyServicePoint,
  releaseServicePoint,
  setServicePointStatus,
  type PointDeps,
} from './client.js';
export { createServicePointsApi, type ServicePointsApi, type ServicePointsParts } from './api.js';
