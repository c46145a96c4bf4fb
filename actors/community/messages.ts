// What the community actor accepts and answers (a conversation's messages), and its kind's name.

export const COMMUNITY_ACTOR = 'community';

export interface CommunityUser {
  id: string;
  name?: string;
  email?: string;
}

export interface CommunityMessage {
  id: string;
  seq: number;
  /** The conversation key (`d:<a>:<b>` or `g:<groupId>`). */
  threadId: string;
  groupId?: string;
  /** The recipient of a direct message. */
  to?: string;
  from: CommunityUser;
  text: string;
  at: string;
  clientId?: string;
}

export type CommunityMsg =
  | { type: 'join'; userId: string }
  | { type: 'leave'; userId: string }
  | { type: 'send'; from: CommunityUser; to?: string; text: string; clientId?: string }
  | { type: 'mark-read'; userId: string; seq: number };

export interface CommunityReply {
  message?: CommunityMessage;
  duplicate?: boolean;
  changed: boolean;
  members: number;
  lastSeq: number;
}
