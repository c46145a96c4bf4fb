// Who may act beyond their own chats and status.

/** Staff roles that may act on any chat and any agent's status, not only their own. */
export const SUPERVISOR_ROLES = ['Admin', 'Supervisor', 'ChatSupervisor'];

export function isSupervisor(roles: readonly string[]): boolean {
  return roles.some((r) => SUPERVISOR_ROLES.includes(r));
}
