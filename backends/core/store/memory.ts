// MemoryStore: the Store contract with no durability; writes are visible at once (tests, dev).
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import { assertKey } from './keys.js';
import { checkStoredSize, checkWrite } from './preconditions.js';
import { rememberJson } from '../../../lib/api/json.js';
import { storedCopy } from './objects.js';

export type MemoryStoreOptions = Omit<StateOptions, 'startRev'>;

export class MemoryStore implements Store {
  private readonly state: StoreState;
  private closed = false;

  constructor(opts: MemoryStoreOptions) {
    this.state = new StoreState(opts);
  }

  async create(key: string, obj: KObject): Promise<KObject> {
    return this.put('create', key, obj);
  }

  createNow(key: string, obj: KObject): KObject {
    return this.put('create', key, obj);
  }

  async update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return this.put('update', key, obj, expectedRev);
  }

  async delete(key: string, expectedRev?: number): Promise<KObject> {
    this.live();
    assertKey(key);
    this.refuseCorrupt('delete', key);
    checkWrite('delete', key, this.state.get(key), expectedRev);
    return this.state.commit(key, this.state.rev + 1, undefined).object;
  }

  async deleteCorrupt(key: string): Promise<void> {
    this.live();
    assertKey(key);
    if (!this.state.isCorrupt(key)) checkWrite('delete', key, this.state.get(key));
    this.state.commit(key, this.state.rev + 1, undefined);
  }

  /** Test hook: key now holds a value that cannot be decoded (as a bad Redis value or a failed decryption would). */
  injectCorrupt(key: string, why = 'invalid character looking for beginning of value'): void {
    this.state.markCorrupt(key, why);
  }

  async get(key: string, minRev?: number): Promise<KObject | undefined> {
    this.live();
    if (minRev !== undefined && minRev > this.state.rev) await this.state.waitForRev(minRev, this.state.tooLargeWaitMs);
    return this.state.read(key);
  }

  getNow(key: string): KObject | undefined {
    this.live();
    return this.state.read(key);
  }

  async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    this.live();
    if (opts?.minRev !== undefined && opts.minRev > this.state.rev) await this.state.waitForRev(opts.minRev, this.state.tooLargeWaitMs);
    return this.state.list(prefix, opts);
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    this.live();
    return this.state.watch(prefix, fromRev, sink);
  }

  async currentRev(): Promise<number> {
    this.live();
    return this.state.rev;
  }

  async waitForRev(rev: number, timeoutMs: number): Promise<void> {
    this.live();
    return this.state.waitForRev(rev, timeoutMs);
  }

  async check(): Promise<void> {
    this.live();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.state.close(new StoreError('unreachable', 'store is closed'));
  }

  private put(kind: 'create' | 'update', key: string, obj: KObject, expectedRev?: number): KObject {
    this.live();
    const type = assertKey(key);
    this.refuseCorrupt(kind, key);
    checkWrite(kind, key, this.state.get(key), expectedRev);
    const rev = this.state.rev + 1;
    const stored = storedCopy(obj, rev);
    const json = JSON.stringify(stored);
    checkStoredSize(json, stored);
    // The object answered and sent to watchers is this one: its text is already made.
    rememberJson(stored, json);
    // The key checked above: commit takes its type rather than cutting it again.
    this.state.commit(key, rev, stored, this.state.clock(), type);
    return stored;
  }

  /** A corrupt key exists (create → `exists`) and cannot be compared (update, delete → `corrupt`). */
  private refuseCorrupt(kind: 'create' | 'update' | 'delete', key: string): void {
    if (!this.state.isCorrupt(key)) return;
    if (kind === 'create') throw new StoreError('exists', `key "${key}" already exists`);
    this.state.read(key);
  }

  private live(): void {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
  }
}
