// Who may act beyond their own chats and status.

/** Staff roles that may act on any chat and any agent's status, not only their own. */
export const SUPERVISOR_ROLES = ['Admin', 'Supervisor', 'ChatSupervisor'];
