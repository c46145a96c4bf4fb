// The store's write journal: batches that may be acknowledged before their LMDB transaction (chat
// messages, CHAT_DURABILITY) are appended to a file instead, one write() per burst of code, and
// acknowledged once it returned (`commit`: the OS holds them, so a killed process loses nothing)
// or once the file is flushed to disk (`flush`: one fdatasync at a time, power loss loses nothing).
// Every `intervalMs` the journaled writes go to the store proper in one transaction, and only
// then is the file that held them deleted; until then reads see them here (the overlay).
//
// Why: a chat message written on its own LMDB transaction paid ~0.27 ms of CPU per transaction
// (pages, free list, meta, two thread hand-offs) and waited a whole transaction's flush before
// anyone received it (bench/chat/profile.md). One append costs one system call.
//
// On disk: DIR/<n>.journal, frames of [u32 length][u32 crc32][JSON of a burst's batches]. A
// start replays every file in order into the store before anything else runs, stops a file at
// its first torn or damaged frame (the tail a crash can leave), and deletes the files.
import { closeSync, existsSync, fdatasync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';

/** One write: a log append, a kv put or a kv delete (the only writes a journaled batch may hold). */
export type JournalOp =
  | ['a', tenant: string, log: string, seq: number, entry: unknown]
  | ['k', tenant: string, ns: string, key: string, value: unknown]
  | ['d', tenant: string, ns: string, key: string];

export interface WriteJournalOptions {
  dir: string;
  /** `commit`: acknowledged once written (survives kill -9); `flush`: once on disk (survives power loss). */
  sync: 'commit' | 'flush';
  /** How often journaled writes are moved to the store proper. */
  intervalMs: number;
  /** Writes the ops to the store proper in one transaction; resolves once durable there and readable. */
  materialize: (ops: JournalOp[]) => Promise<void>;
  logger?: Logger;
}

/**
 * Journaled writes held past this many ops move to the store at once, not at the next interval: a
 * move holds the event loop while LMDB takes its writes (a 5,000-write move held it 38 ms, a
 * 1,000-write one ~11 ms at most, in a throwaway probe of 4,000 chat messages/s).
 */
const EAGER_OPS = 1_000;
/**
 * Journaled writes held at most (the store refusing them for a while: disk full, say): past it new
 * journaled batches are refused (503), so memory stays bounded while the store cannot take them.
 */
export const MAX_PENDING_OPS = 200_000;
/** Replayed ops per transaction at start. */
const REPLAY_CHUNK = 10_000;
const FRAME_HEADER = 8;

interface Segment {
  no: number;
  path: string;
  fd: number;
  /** Frames written to it, and frames of it now in the store: deleted when the two meet. */
  frames: number;
  stored: number;
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** The writes of one burst: one frame in one segment. */
interface Frame {
  seg: Segment;
  ops: JournalOp[];
  /** Its batches' commits, answered when the frame is acknowledged (`flush`: after fdatasync). */
  waiters: Waiter[];
  /** In the store proper (and readable there). */
  stored: boolean;
}

interface Pending {
  frame: Frame;
  value: unknown;
  deleted: boolean;
}

const sep = '\u0000';

export class WriteJournal {
  private current: Segment;
  /** Segments written before `current`, not yet deleted. */
  private readonly retired: Segment[] = [];
  private turn: { json: string[]; ops: JournalOp[][]; waiters: Waiter[] } | undefined;
  /** `flush`: frames written and waiting for the next fdatasync, oldest first. */
  private unsettled: Frame[] = [];
  /** `flush`: the fdatasync in flight (one at a time). */
  private syncing: Promise<void> | undefined;
  /** Acknowledged frames not yet in the store, oldest first. */
  private pending: Frame[] = [];
  private pendingOps = 0;
  /**
   * What reads see before the store has it: log entries by tenant+log, kv values by tenant+ns. The
   * values are the writers' own objects (a read of LMDB decodes a fresh copy), so readers must not
   * change them: a change would reach LMDB with the move.
   */
  private readonly logs = new Map<string, Map<number, Pending>>();
  private readonly kvs = new Map<string, Map<string, Pending>>();
  private materializing: Promise<boolean> | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly opts: WriteJournalOptions,
    next: number,
  ) {
    this.current = this.openSegment(next);
    this.timer = setInterval(() => void this.materialize(), opts.intervalMs);
    this.timer.unref();
  }

  /** Replays what an earlier run left (into the store, via `materialize`), then opens for writing. */
  static async open(opts: WriteJournalOptions): Promise<{ journal: WriteJournal; replayed: number }> {
    mkdirSync(opts.dir, { recursive: true });
    const found = readdirSync(opts.dir)
      .map((f) => /^(\d+)\.journal$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    let ops: JournalOp[] = [];
    let replayed = 0;
    for (const no of found) {
      const path = join(opts.dir, `${no}.journal`);
      const { ops: read, dropped } = readFrames(readFileSync(path));
      if (dropped > 0) opts.logger?.warn({ path, droppedBytes: dropped }, 'write journal: a torn or damaged frame ends this file (what a crash mid-write leaves); its writes were never acknowledged');
      for (const op of read) {
        ops.push(op);
        if (ops.length >= REPLAY_CHUNK) {
          await opts.materialize(ops);
          replayed += ops.length;
          ops = [];
        }
      }
    }
    if (ops.length > 0) await opts.materialize(ops);
    replayed += ops.length;
    for (const no of found) unlinkSync(join(opts.dir, `${no}.journal`));
    if (found.length > 0) opts.logger?.info({ files: found.length, writes: replayed }, 'write journal replayed into the store');
    return { journal: new WriteJournal(opts, (found.at(-1) ?? 0) + 1), replayed };
  }

  /**
   * Journals the ops (`json`: their JSON, if the caller has it); resolves when acknowledged under
   * `sync`. Written when the code running now is done.
   */
  append(ops: JournalOp[], json = JSON.stringify(ops)): Promise<void> {
    if (this.closed) return Promise.reject(new AppError('ERR_UNAVAILABLE', ['the store is closed']));
    if (this.pendingOps >= MAX_PENDING_OPS) {
      void this.materialize();
      return Promise.reject(new AppError('ERR_UNAVAILABLE', [`the store's write journal holds ${this.pendingOps} writes it could not move into the store yet`]));
    }
    if (!this.turn) {
      this.turn = { json: [], ops: [], waiters: [] };
      // Written once the code running now is done (before its replies are released), so the
      // writes of one burst share a frame; not later in the loop: replies answered from a later
      // phase would wait for the edge's next drain of its sockets.
      queueMicrotask(() => this.writeTurn());
    }
    const turn = this.turn;
    turn.json.push(json);
    turn.ops.push(ops);
    return new Promise<void>((resolve, reject) => turn.waiters.push({ resolve, reject }));
  }

  /** True while some journaled write is not yet in the store. */
  busy(): boolean {
    return this.logs.size > 0 || this.kvs.size > 0 || this.unsettled.length > 0 || this.syncing !== undefined || this.turn !== undefined;
  }

  /** True when a write of `ops` would land on a key journaled and not yet in the store. */
  holds(ops: JournalOp[]): boolean {
    const mine = new Set(ops.map(opKey));
    const inFrames = (frames: Iterable<JournalOp[]>) => {
      for (const list of frames) for (const op of list) if (mine.has(opKey(op))) return true;
      return false;
    };
    for (const op of ops) {
      if (op[0] === 'a' ? this.logs.get(op[1] + sep + op[2])?.has(op[3]) : this.kvs.get(op[1] + sep + op[2])?.has(op[3])) return true;
    }
    return inFrames(this.turn?.ops ?? []) || inFrames(this.unsettled.map((f) => f.ops));
  }

  /** Every journaled write so far is acknowledged and in the store when this resolves. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.turn) this.writeTurn();
      if (this.syncing) await this.syncing;
      else if (this.materializing) await this.materializing;
      else if (this.pending.length > 0) {
        if (!(await this.materialize())) throw new AppError('ERR_UNAVAILABLE', ['the store could not take its journaled writes']);
      } else if (this.unsettled.length > 0) this.syncNext();
      else return;
    }
  }

  /** Journaled log entries of one log from `fromSeq` on (unordered). */
  logEntries(tenant: string, log: string, fromSeq: number): Array<{ seq: number; entry: unknown }> {
    const m = this.logs.get(tenant + sep + log);
    if (!m) return [];
    const out: Array<{ seq: number; entry: unknown }> = [];
    for (const [seq, p] of m) if (seq >= fromSeq) out.push({ seq, entry: p.value });
    return out;
  }

  lastSeq(tenant: string, log: string): number {
    const m = this.logs.get(tenant + sep + log);
    let last = 0;
    if (m) for (const seq of m.keys()) if (seq > last) last = seq;
    return last;
  }

  /** A journaled kv write: `{deleted}` or `{value}`; undefined when the store has the answer. */
  kv(tenant: string, ns: string, key: string): Pending | undefined {
    return this.kvs.get(tenant + sep + ns)?.get(key);
  }

  kvEntries(tenant: string, ns: string): ReadonlyMap<string, Pending> | undefined {
    return this.kvs.get(tenant + sep + ns);
  }

  /** Moves every journaled write to the store (at most one transaction at a time); false if that failed. */
  materialize(): Promise<boolean> {
    if (this.materializing) return this.materializing;
    if (this.pending.length === 0) return Promise.resolve(true);
    const frames = this.pending;
    this.pending = [];
    this.pendingOps = 0;
    // New turns go to a new file; this one is deleted once every frame written to it is stored.
    if (this.current.frames > 0) {
      this.retired.push(this.current);
      this.current = this.openSegment(this.current.no + 1);
    }
    const ops = frames.flatMap((f) => f.ops);
    const run = (async () => {
      try {
        await this.opts.materialize(ops);
      } catch (err) {
        // Kept, in order, for the next attempt; nothing acknowledged is dropped.
        this.pending = frames.concat(this.pending);
        this.pendingOps += ops.length;
        this.opts.logger?.error({ err, writes: ops.length }, 'write journal: moving journaled writes to the store failed; retrying at the next interval');
        return false;
      }
      for (const f of frames) {
        f.stored = true;
        f.seg.stored++;
      }
      this.forget(frames);
      this.deleteStoredSegments();
      return true;
    })().finally(() => {
      this.materializing = undefined;
    });
    this.materializing = run;
    return run;
  }

  /** Moves what is left to the store and closes; files the store could not take stay for the next start. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    try {
      await this.drain();
    } catch (err) {
      this.opts.logger?.error({ err }, 'write journal: closing with writes not yet in the store; the next start replays them');
    }
    for (const seg of [...this.retired, this.current]) closeSync(seg.fd);
    if (this.current.frames === 0) unlinkSync(this.current.path);
  }

  private openSegment(no: number): Segment {
    const path = join(this.opts.dir, `${no}.journal`);
    return { no, path, fd: openSync(path, 'a'), frames: 0, stored: 0 };
  }

  private writeTurn(): void {
    const turn = this.turn;
    if (!turn) return;
    this.turn = undefined;
    const payload = Buffer.from('[' + turn.json.join(',') + ']');
    const frame = Buffer.allocUnsafe(FRAME_HEADER + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    frame.writeUInt32LE(crc32(payload), 4);
    payload.copy(frame, FRAME_HEADER);
    const seg = this.current;
    try {
      for (let off = 0; off < frame.length; ) off += writeSync(seg.fd, frame, off);
    } catch (err) {
      // A frame may be half-written: later turns go to a new file, so replay loses only this one.
      this.opts.logger?.error({ err, path: seg.path }, 'write journal: append failed; the writes of this turn are refused');
      this.retired.push(seg);
      this.current = this.openSegment(seg.no + 1);
      const refused = new AppError('ERR_UNAVAILABLE', ['the store could not write its journal']);
      for (const w of turn.waiters) w.reject(refused);
      this.deleteStoredSegments();
      return;
    }
    seg.frames++;
    const f: Frame = { seg, ops: turn.ops.flat(), waiters: turn.waiters, stored: false };
    if (this.opts.sync === 'commit') this.settle(f);
    else {
      this.unsettled.push(f);
      this.syncNext();
    }
  }

  /** `flush`: one fdatasync at a time; frames written meanwhile ride on the next one. */
  private syncNext(): void {
    if (this.syncing || this.unsettled.length === 0) return;
    const frames = this.unsettled;
    this.unsettled = [];
    // Frames of one sync share a file unless a rotation came between: sync each file they use.
    const fds = [...new Set(frames.map((f) => f.seg.fd))];
    const synced = fds.map((fd) => new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve()))));
    this.syncing = Promise.all(synced).then(
      () => {
        for (const f of frames) this.settle(f);
      },
      (err: unknown) => {
        // Refused, though the frames are in the file: a restart may still replay them (as a
        // database that fails to flush, the disk is then the operator's to look at).
        this.opts.logger?.error({ err }, 'write journal: fdatasync failed; the writes of these turns are refused');
        const refused = new AppError('ERR_UNAVAILABLE', ['the store could not flush its journal']);
        for (const f of frames) for (const w of f.waiters) w.reject(refused);
      },
    ).finally(() => {
      this.syncing = undefined;
      this.syncNext();
    });
  }

  /** An acknowledged frame: readable through the overlay, queued for the store. */
  private settle(f: Frame): void {
    for (const op of f.ops) {
      const slot = (op[0] === 'a' ? this.logSlot(op[1], op[2]) : this.kvSlot(op[1], op[2])) as Map<string | number, Pending>;
      slot.set(op[3], { frame: f, value: op[0] === 'd' ? undefined : op[4], deleted: op[0] === 'd' });
    }
    this.pending.push(f);
    this.pendingOps += f.ops.length;
    for (const w of f.waiters) w.resolve();
    f.waiters = [];
    if (this.pendingOps >= EAGER_OPS) void this.materialize();
  }

  private logSlot(tenant: string, log: string): Map<number, Pending> {
    const k = tenant + sep + log;
    let m = this.logs.get(k);
    if (!m) this.logs.set(k, (m = new Map()));
    return m;
  }

  private kvSlot(tenant: string, ns: string): Map<string, Pending> {
    const k = tenant + sep + ns;
    let m = this.kvs.get(k);
    if (!m) this.kvs.set(k, (m = new Map()));
    return m;
  }

  /** Drops from the overlay what the store now answers (a later write of the same key stays). */
  private forget(frames: Frame[]): void {
    for (const f of frames) {
      for (const op of f.ops) {
        const outer = op[0] === 'a' ? this.logs : this.kvs;
        const k = op[1] + sep + op[2];
        const m = outer.get(k) as Map<string | number, Pending> | undefined;
        if (!m) continue;
        const p = m.get(op[3]);
        if (p && p.frame.stored) m.delete(op[3]);
        if (m.size === 0) outer.delete(k);
      }
    }
  }

  private deleteStoredSegments(): void {
    for (let i = 0; i < this.retired.length; ) {
      const seg = this.retired[i];
      // A file holding frames not yet stored (written, flushing or moving) stays.
      if (seg.stored < seg.frames) {
        i++;
        continue;
      }
      closeSync(seg.fd);
      unlinkSync(seg.path);
      this.retired.splice(i, 1);
    }
  }
}

function opKey(op: JournalOp): string {
  return (op[0] === 'a' ? 'a' : 'k') + sep + op[1] + sep + op[2] + sep + op[3];
}

/** Whether `dir` holds journaled writes not yet replayed (files with something in them). */
export function journalHolds(dir: string): boolean {
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some((f) => /^\d+\.journal$/.test(f) && statSync(join(dir, f)).size > 0);
}

/** The ops of every whole frame of a file, and how many bytes after the last good frame were dropped. */
export function readFrames(buf: Buffer): { ops: JournalOp[]; dropped: number } {
  const ops: JournalOp[] = [];
  let off = 0;
  while (off + FRAME_HEADER <= buf.length) {
    const len = buf.readUInt32LE(off);
    const end = off + FRAME_HEADER + len;
    if (end > buf.length) break;
    const payload = buf.subarray(off + FRAME_HEADER, end);
    if (crc32(payload) !== buf.readUInt32LE(off + 4)) break;
    let batches: JournalOp[][];
    try {
      batches = JSON.parse(payload.toString('utf8')) as JournalOp[][];
    } catch {
      break;
    }
    for (const b of batches) ops.push(...b);
    off = end;
  }
  return { ops, dropped: buf.length - off };
}
