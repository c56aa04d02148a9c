// Builds a process's watch cache (the shared in-memory StoreState): by
// replaying the change feed while it still holds the domain's whole history,
// else from a consistent Redis snapshot, before whose revision history is not
// in this cache: watches and lists older than it answer `gone`.
import type { Redis } from 'ioredis';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import type { RedisKeys } from './redis-keys.js';
import { runSnapshot } from './redis-scripts.js';
import { decodeObject, decodeStoredBytes } from './redis-codec.js';
import { StoreError } from './types.js';
import { fieldsOf, readEntry } from './redis-feed.js';

/**
 * `replay` (a Redis Cluster domain opening on first use): a domain that
 * already holds writes is rebuilt by replayWholeFeed when it can, else from
 * the snapshot. Its newest revision is read first, so a write landing while
 * the domain opens is either in the feed the replay reads, or after that
 * revision; the snapshot, a read of every object, is only taken when the
 * replay is not. A snapshot newer than that revision (a write landed between
 * the two reads: for a domain read as empty, its very first) would start the
 * cache after that write, so a watch from before it would be `gone`: the
 * replay is tried once more, up to the snapshot's revision.
 */
export async function loadState(client: Redis, keys: RedisKeys, opts: Omit<StateOptions, 'startRev'>, replay = false): Promise<StoreState> {
  const last = replay ? Number((await client.get(keys.last)) ?? 0) : 0;
  if (last > 0) {
    const replayed = await replayUpTo(client, keys, opts, last);
    if (replayed) return replayed;
  }
  const snap = await runSnapshot(client, keys);
  if (replay && snap.rev > last) {
    const replayed = await replayUpTo(client, keys, opts, snap.rev);
    if (replayed) return replayed;
  }
  const state = new StoreState({ ...opts, startRev: snap.rev });
  try {
    for (const [type, rows] of snap.types) {
      for (const [key, value] of rows) {
        const where = `${keys.objectsStem}${type} "${key}"`;
        try {
          state.load(key, decodeStoredBytes(value, where));
        } catch (err) {
          // One undecodable value is that object's problem: reads of it answer `corrupt`, the rest is served.
          if (!(err instanceof StoreError && err.code === 'corrupt')) throw err;
          state.markCorrupt(key, err.message);
        }
      }
    }
  } catch (err) {
    state.close(new StoreError('corrupt', 'snapshot failed'));
    throw err;
  }
  return state;
}

/** replayWholeFeed, when it reaches rev. */
async function replayUpTo(client: Redis, keys: RedisKeys, opts: Omit<StateOptions, 'startRev'>, rev: number): Promise<StoreState | undefined> {
  const replayed = await replayWholeFeed(client, keys, opts);
  if (replayed && replayed.rev >= rev) return replayed;
  replayed?.close(new StoreError('unreachable', 'replay abandoned'));
  return undefined;
}

const REPLAY_CHUNK = 1000;

/**
 * A domain whose change feed still begins with its first write (a young type,
 * history never trimmed) is rebuilt by replaying that feed instead: its
 * history then starts at 0, so a watch from any earlier revision — one a
 * process read before it first touched the type (Redis Cluster opens a type's
 * domain on first use) — sees every event instead of `gone`. Undefined when
 * the feed is empty, trimmed, or changes under the replay (a gap): the caller
 * takes the snapshot.
 */
async function replayWholeFeed(client: Redis, keys: RedisKeys, opts: Omit<StateOptions, 'startRev'>): Promise<StoreState | undefined> {
  let rows = (await client.xrange(keys.feed, '-', '+', 'COUNT', REPLAY_CHUNK)) as [string, string[]][];
  if (rows.length === 0 || fieldsOf(rows[0]![1]).p !== '0') return undefined;
  const state = new StoreState({ ...opts, startRev: 0 });
  try {
    while (rows.length > 0) {
      for (const [id, raw] of rows) {
        const { rev, prev, key, json, at } = readEntry(id, raw);
        if (prev !== state.rev || key === '') throw new ReplayGap();
        state.commit(key, rev, json === undefined ? undefined : decodeObject(json, rev, `feed entry ${id}`), Number(at));
      }
      rows = (await client.xrange(keys.feed, `(${rows[rows.length - 1]![0]}`, '+', 'COUNT', REPLAY_CHUNK)) as [string, string[]][];
    }
  } catch (err) {
    state.close(new StoreError('unreachable', 'replay abandoned'));
    if (err instanceof ReplayGap || (err instanceof StoreError && err.code === 'corrupt')) return undefined;
    throw err;
  }
  return state;
}

class ReplayGap extends Error {}
