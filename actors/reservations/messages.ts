// Messages of the reservations actor (kind `reservations`, one per reservation definition: key =
// the definition's sk), the one writer of that definition's `reservation` records. Capacity checks
// and the check-in stamp are read-check-writes, so they run here one at a time.
import type { StoredRecord } from '../../core/store/record.js';
import type { ReservationSettings } from '../org-settings/index.js';

export const RESERVATIONS_ACTOR = 'reservations';
export const REMINDER_JOB = 'reservation.reminder';

export type ReservationStatus = 'confirmed' | 'cancelled' | 'checked_in';

/** Who is asking: bookings belong to `customerId` (a customer's record sk; a staff user's sub). */
export interface Owner {
  customerId: string;
  email?: string;
  /** Staff may book for a customer (`customerId` in the body). */
  staff: boolean;
  by: string;
}

export interface CustomerInfo {
  name?: string;
  email?: string;
  phone?: string;
}

export interface CreateReservationInput {
  reservationDefinitionId: string;
  service?: string | { id?: string; name?: string };
  /** ISO instant, or a zone-less wall-clock time read in the definition's timezone. */
  startTime: string;
  endTime?: string;
  partySize?: number;
  customer?: CustomerInfo;
  notes?: string;
  /** Staff only: book for this customer. */
  customerId?: string;
  /** Form answers: every flat field that is not one of the above. */
  answers: Record<string, unknown>;
}

export interface UpdateReservationInput {
  service?: string | { id?: string; name?: string };
  startTime?: string;
  endTime?: string;
  partySize?: number;
  customer?: CustomerInfo;
  notes?: string;
  status?: 'cancelled';
  answers?: Record<string, unknown>;
}

export type ReservationMessage =
  | { type: 'create'; input: CreateReservationInput; owner: Owner; idempotencyKey?: string }
  | { type: 'update'; id: string; changes: UpdateReservationInput; owner: Owner; version?: number }
  | { type: 'send-reminder'; id: string; owner: Owner }
  | { type: 'stamp-check-in'; id: string; taskId: string }
  | { type: 'fire-reminder'; jobId: string; reservationId: string }
  /** Only to the actor keyed RESERVATION_SETTINGS_KEY (settings.ts). */
  | { type: 'update-settings'; patch: Partial<ReservationSettings> };

export type ReservationRecord = StoredRecord;
