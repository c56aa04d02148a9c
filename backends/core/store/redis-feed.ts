// The change-feed reader: one loop per revision domain and process, blocking
// XREADs on its own connection, applying entries to the local watch cache
// strictly in revision order. Each entry names the domain's previous
// revision (p), so an entry whose p is not the revision the cache is at is a
// gap: history was trimmed past us or Redis lost data, and the cache is
// rebuilt from a snapshot. (Entries written before p existed carry none;
// for them revisions were dense: rev + 1.)
//
// When Redis is unreachable the host is told once (down), and when it is
// back the cache is checked before service resumes (up): the entry at our
// revision must still be the one we applied, otherwise Redis lost or
// rewrote history and the cache is rebuilt.
import type { Redis } from 'ioredis';
import type { RedisKeys } from './redis-keys.js';
import type { StoreState } from './state.js';
import type { StoreError } from './types.js';
import type { KObject } from '../../../lib/api/meta.js';
import { decodeObject } from './redis-codec.js';
import { unreachable } from './redis-connect.js';
import { raiseFloor } from './redis-scripts.js';

export interface FeedHost {
  /** The cache entries go to (replaced by resync). */
  readonly state: StoreState;
  /** Rebuilds the cache from a snapshot. */
  resync(reason: string): Promise<void>;
  down(err: StoreError): void;
  up(): void;
  /** A revision the cache applied (the process's cross-domain clock follows it). */
  observed?(rev: number): void;
  /** A feed read is about to be sent: a tick of the consistent-read fence (redis-readindex.ts). */
  sending?(): number;
  /** The read sent at that tick came back not full and was applied: the cache then held all Redis had. */
  caughtUp?(sent: number): void;
}

type Entry = [id: string, fields: string[]];

interface Marker {
  rev: number;
  key: string;
  at: string;
}

/** One change-feed entry, read: `prev` is the domain's revision before it (rev − 1 for entries written before `p` existed); `json` is absent for a delete. */
export interface FeedEntry {
  rev: number;
  prev: number;
  key: string;
  json: string | undefined;
  at: string;
}

export function readEntry(id: string, raw: string[]): FeedEntry {
  const rev = Number.parseInt(id, 10);
  // The write script's layout (k, t, p, then o or d), read by position: no field map per entry.
  if (raw.length === 8 && raw[0] === 'k' && raw[2] === 't' && raw[4] === 'p') {
    return { rev, prev: Number(raw[5]), key: raw[1]!, json: raw[6] === 'o' ? raw[7] : undefined, at: raw[3]! };
  }
  const f = fieldsOf(raw);
  return { rev, prev: f.p === undefined ? rev - 1 : Number(f.p), key: f.k ?? '', json: f.o, at: f.t ?? '' };
}

export function fieldsOf(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}

/** Bounds the own-writes map should the feed stall (its entries are only an optimisation). */
const MAX_OWN = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Entries per feed read: a reply this full may have left more behind. */
const FEED_COUNT = 1000;

export class FeedReader {
  /**
   * This process's own writes by revision, until their feed entry arrives: the
   * entry then takes the object the write already made instead of parsing its
   * JSON again (when the JSON is the same, so a foreign entry is never taken).
   */
  private readonly own = new Map<number, { json: string; obj: KObject }>();
  private closed = false;
  private done: Promise<void> = Promise.resolve();
  private marker: Marker | undefined;

  constructor(
    /** Dedicated to blocking reads. */
    private readonly blocking: Redis,
    private readonly client: Redis,
    private readonly keys: RedisKeys,
    private readonly host: FeedHost,
    private readonly blockMs = 1000,
  ) {}

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.blocking.disconnect();
    await this.done;
  }

  /**
   * A write of this process was acknowledged at rev (obj: stamped and frozen;
   * undefined for a delete). When it directly follows the cache (`prev`, the
   * domain's revision before it, is the cache's) it is applied now, as its feed
   * entry would be: this process's watchers hear it before the write is
   * answered, as on the memory store, instead of a feed round trip later, and
   * the entry is skipped when it comes. Otherwise the feed applies it in order.
   */
  wrote(rev: number, prev: number, key: string, json: string, obj: KObject | undefined, at: number): void {
    const state = this.host.state;
    if (rev <= state.rev) return;
    if (prev === state.rev && this.applied(rev, key, obj, at)) return;
    if (obj && this.own.size < MAX_OWN) this.own.set(rev, { json, obj });
  }

  /** Commits an own write as the feed would; false (the feed will) when the cache refuses it. */
  private applied(rev: number, key: string, obj: KObject | undefined, at: number): boolean {
    try {
      this.commit(rev, key, obj, String(at));
    } catch {
      return false;
    }
    return true;
  }

  /** Makes one change visible in the cache and remembers it as the last applied (`at`: the entry's t field). */
  private commit(rev: number, key: string, obj: KObject | undefined, at: string): void {
    this.host.state.commit(key, rev, obj, Number(at));
    this.marker = { rev, key, at };
    this.host.observed?.(rev);
  }

  /** Remembers the entry at the cache's revision (after a snapshot). */
  async mark(): Promise<void> {
    const rev = this.host.state.rev;
    const rows = rev === 0 ? [] : await this.client.xrange(this.keys.feed, `${rev}-0`, `${rev}-0`);
    const f = rows[0] ? fieldsOf(rows[0][1]) : undefined;
    this.marker = f ? { rev, key: f.k ?? '', at: f.t ?? '' } : undefined;
  }

  private async loop(): Promise<void> {
    let healthy = true;
    let delay = 50;
    while (!this.closed) {
      try {
        if (!healthy) {
          await this.verify();
          healthy = true;
          delay = 50;
          this.host.up();
        }
        const sent = this.host.sending?.();
        const reply = (await this.blocking.xread('COUNT', FEED_COUNT, 'BLOCK', this.blockMs, 'STREAMS', this.keys.feed, `${this.host.state.rev}-0`)) as
          [string, Entry[]][] | null;
        const entries = reply?.[0]?.[1];
        // Not full (or nothing through the whole block): Redis had no more when it answered, which was after `sent`.
        const whole = entries ? (await this.apply(entries)) && entries.length < FEED_COUNT : true;
        if (whole && sent !== undefined) this.host.caughtUp?.(sent);
      } catch (err) {
        if (this.closed) break;
        if (healthy) {
          healthy = false;
          this.host.down(unreachable(err));
        }
        await sleep(delay);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  /** Applies entries in order; false when the cache had to be rebuilt instead. */
  private async apply(entries: Entry[]): Promise<boolean> {
    for (const [id, raw] of entries) {
      const state = this.host.state;
      const { rev, prev, key, json, at } = readEntry(id, raw);
      if (rev <= state.rev) continue; // already applied
      if (prev !== state.rev) return this.rebuilt(`change feed jumped from revision ${state.rev} to ${rev} (after ${prev})`);
      try {
        const mine = this.own.get(rev);
        if (mine) this.own.delete(rev);
        const obj = json === undefined ? undefined : mine?.json === json ? mine.obj : decodeObject(json, rev, `feed entry ${id}`);
        this.commit(rev, key, obj, at);
      } catch (err) {
        return this.rebuilt(`change feed entry ${id} does not apply: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Writes whose entry came before their acknowledgement, or was skipped by a rebuild.
    for (const rev of this.own.keys()) {
      if (rev > this.host.state.rev) break;
      this.own.delete(rev);
    }
    return true;
  }

  private async rebuilt(reason: string): Promise<false> {
    await this.rebuild(reason);
    return false;
  }

  /** After an outage: is Redis's history still the one the cache holds? */
  private async verify(): Promise<void> {
    const rev = this.host.state.rev;
    const redisRev = Number((await this.client.get(this.keys.last)) ?? 0);
    if (redisRev < rev) {
      // Redis lost writes: never hand out a revision twice, and skip one more so the
      // rebuilt cache starts above every revision clients hold (they answer gone).
      await raiseFloor(this.client, this.keys, rev + 1);
      return this.rebuild(`redis revision ${redisRev} is behind the cache's ${rev}`);
    }
    if (rev === 0) return;
    const rows = await this.client.xrange(this.keys.feed, `${rev}-0`, `${rev}-0`);
    const f = rows[0] ? fieldsOf(rows[0][1]) : undefined;
    const m = this.marker;
    if (!f || !m || m.rev !== rev || f.k !== m.key || f.t !== m.at) return this.rebuild(`redis no longer holds revision ${rev} as applied`);
  }

  private async rebuild(reason: string): Promise<void> {
    await this.host.resync(reason);
    await this.mark();
  }
}
