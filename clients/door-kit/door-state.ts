// The kit's own door memory: the entries it let in that the synced feed does not count yet. The
// list rules add them to the feed's counts, so the kit never admits one ticket twice itself while
// offline. An entry leaves this memory once it was uploaded and a later feed page carries its
// ticket (the server's counts then include it); until then it counts here.
export interface LocalEntry {
  nonce: string;
  ticketId: string;
  eventId: string;
  listId: string | null;
  at: number;
  /** The local day (event's time zone) of `at`, for `maxEntriesPerDay`. */
  day: number;
  uploaded: boolean;
}

export class LocalDoor {
  private readonly byTicket = new Map<string, LocalEntry[]>();

  constructor(entries: LocalEntry[] = []) {
    for (const e of entries) this.add(e);
  }

  add(e: LocalEntry): void {
    const list = this.byTicket.get(e.ticketId);
    if (list) list.push(e);
    else this.byTicket.set(e.ticketId, [e]);
  }

  /** This kit's entries of the ticket at the event, on `listId` (null: the event's own door). */
  entries(eventId: string, ticketId: string, listId: string | null): LocalEntry[] {
    return (this.byTicket.get(ticketId) ?? []).filter((e) => e.eventId === eventId && e.listId === listId);
  }

  /** The ticket of this kit's entry `nonce`, while it keeps it. */
  ticketOf(nonce: string): string | undefined {
    for (const list of this.byTicket.values()) for (const e of list) if (e.nonce === nonce) return e.ticketId;
    return undefined;
  }

  markUploaded(nonces: ReadonlySet<string>): void {
    for (const list of this.byTicket.values()) for (const e of list) if (nonces.has(e.nonce)) e.uploaded = true;
  }

  /** Uploaded entries of the ticket named in `settled`: a feed page now counts them. */
  settle(eventId: string, ticketId: string, settled: ReadonlySet<string>): void {
    const list = this.byTicket.get(ticketId);
    if (!list) return;
    const left = list.filter((e) => !(e.eventId === eventId && e.uploaded && settled.has(e.nonce)));
    if (left.length === 0) this.byTicket.delete(ticketId);
    else this.byTicket.set(ticketId, left);
  }

  uploadedNonces(): Set<string> {
    const out = new Set<string>();
    for (const list of this.byTicket.values()) for (const e of list) if (e.uploaded) out.add(e.nonce);
    return out;
  }

  toJSON(): LocalEntry[] {
    return [...this.byTicket.values()].flat();
  }
}
