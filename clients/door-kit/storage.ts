// Where the kit keeps what must survive a restart of the app: the device credential, each
// event's synced view and cursor, the queue of scans not uploaded yet, its own door memory and
// the conflicts reported. A key-value interface of JSON values, so an app may put it in
// whatever it has (IndexedDB, SQLite, the keychain for the token); two are here.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface KitStorage {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
}

/** Kept in memory only: a restarted app starts empty (tests, kiosks that re-enrol). */
export class MemoryStorage implements KitStorage {
  private readonly data = new Map<string, string>();

  async get<T>(key: string): Promise<T | undefined> {
    const v = this.data.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  async set(key: string, value: unknown): Promise<void> {
    // A copy, as a store on disk would keep: later changes to the object are not saved by accident.
    this.data.set(key, JSON.stringify(value));
  }
}

/**
 * One JSON file per key in a directory. Each write goes to a temporary file renamed over the old
 * one, so a crash mid-write leaves the previous value, never half a file.
 */
export class JsonFileStorage implements KitStorage {
  private ready: Promise<unknown> | undefined;
  /** The last write of each key: writes of one key go one after another (they share a temporary file). */
  private readonly writes = new Map<string, Promise<void>>();

  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return join(this.dir, `${encodeURIComponent(key)}.json`);
  }

  async get<T>(key: string): Promise<T | undefined> {
    try {
      return JSON.parse(await readFile(this.file(key), 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  set(key: string, value: unknown): Promise<void> {
    // Serialized now: the value as it is at the call, not as it may be when the previous write ends.
    const text = JSON.stringify(value);
    const write = (this.writes.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => this.write(key, text));
    this.writes.set(key, write);
    return write;
  }

  private async write(key: string, text: string): Promise<void> {
    // The device token is among the values: readable by this user only.
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.ready;
    const to = this.file(key);
    const tmp = `${to}.${process.pid}.tmp`;
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, to);
  }
}
