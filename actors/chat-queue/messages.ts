// What the chat-queue actor accepts and answers, and its kind's name: callers address it with these.
import type { Participant } from '../chat-room/index.js';

export const QUEUE_KEY = 'main';

export const CHAT_QUEUE_ACTOR = 'chat-queue';

export interface QueueEntry {
  chatId: string;
  /** Epoch ms. */
  queuedAt: number;
  department: string | null;
  customer: Participant;
  subject: string | null;
}

export type QueueMsg =
  | { type: 'enqueue'; entry: QueueEntry }
  | { type: 'remove'; chatId: string }
  | { type: 'pick'; department?: string | null }
  | { type: 'list' }
  | { type: 'position'; chatId: string };

export interface QueueView extends QueueEntry {
  position: number;
}

export interface QueueReply {
  /** The entry this message is about (picked, enqueued, looked up), with its position. */
  entry: QueueView | null;
  waiting: number;
  /** Every waiting chat with its position (list, and after each change so callers can notify). */
  entries: QueueView[];
  changed: boolean;
}
