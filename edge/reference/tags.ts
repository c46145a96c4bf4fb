// One line per reference section: what it is for, in the words a newcomer looks for. A section a
// module adds without a line here still gets one (built from its name), so the document stays whole.
const TAGS: Record<string, string> = {
  AI: 'AI answers streamed as Server-Sent Events, for the chat assistant and agent assist.',
  'Applications and API keys': 'Applications and their API keys: server-to-server access with `x-api-key`.',
  Attendee: "An attendee's own tickets and their QR codes (customer tokens).",
  'Attendee community': 'Messages between attendees, sent over REST (the live channel is `/community-chat`).',
  Authentication: 'Sign-up, sign-in, token refresh and sign-out for staff and customers.',
  'CRM leads': 'Leads: capture, qualify and convert prospective customers.',
  Chat: 'Live chat: sessions, history, the waiting queue and widget configuration (the live channel is `/chat`).',
  'Check-in queue': 'Walk-in and reservation check-in queue: tasks, service points, positions and history.',
  'Check-in scanning': 'Door scanning: check tickets in and out by QR code or number, per zone, with live counts.',
  Communications: 'Email and SMS sent to customers, and their delivery state.',
  'Customer activity': 'What a customer did: their timeline across orders, tickets, chats and messages.',
  'Customer self-service': 'A signed-in customer reads and changes their own profile and data.',
  'Dynamic query': 'Saved queries over your records: define once, run with parameters.',
  Events: 'Events: create and publish them, their zones, sessions, participants and media.',
  Inbox: 'The shared inbox: conversations threaded from email and SMS.',
  Integrations: 'The catalogue of third-party integrations and their settings.',
  Notes: 'Notes attached to any record.',
  Operations: 'Health, readiness and metrics for whoever runs the service.',
  'Passcodes and cards': 'Staff passcodes (PIN) and access cards: sign-in at a till or door.',
  Phone: 'Voice and SMS: numbers, inbound webhooks and call handling.',
  Presence: 'Who is online: agent status and availability.',
  Reference: 'This reference: the OpenAPI and AsyncAPI documents, Markdown views and search.',
  Repository: 'Records of any kind you define: create, read, update, delete and find with a MongoDB filter.',
  Reservations: 'Reservations: bookings at a location, with reminders.',
  'Scanner devices': 'Door scanners enrolled as devices: enrolment, one-time initialization, their own credential, revocation.',
  'Security (2FA)': 'Two-factor authentication: authenticator apps, email and SMS codes, backup codes.',
  'Service points': 'Service points (tables, counters, desks) and their status.',
  'Social sync': 'Posts and messages synchronised from social networks.',
  Storefront: 'Point of sale: products, tabs, order items, settling, refunds, splits and receipts.',
  'Storefront payments': 'Card payments: payment intents, terminals and processor webhooks.',
  'Support tickets': 'Customer support tickets: open, assign, reply and close.',
  Tickets: 'Event tickets: issue, sell, transfer, refund, badges and perks.',
  Workflow: 'Workflows: automated steps run on record changes and schedules.',
};

export function tagDescription(tag: string): string {
  return TAGS[tag] ?? `Operations of the ${tag} section.`;
}
