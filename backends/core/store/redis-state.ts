// Builds a process's watch cache (the shared in-memory StoreState) from a
// consistent Redis snapshot. History before the snapshot's revision is not
// in this cache: watches and lists older than it answer `gone`.
import type { Redis } from 'ioredis';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import type { RedisKeys } from './redis-keys.js';
import { runSnapshot } from './redis-scripts.js';
import { decodeObject, splitStored } from './redis-codec.js';
import { StoreError } from './types.js';

export async function loadState(client: Redis, keys: RedisKeys, opts: Omit<StateOptions, 'startRev'>): Promise<StoreState> {
  const snap = await runSnapshot(client, keys);
  const state = new StoreState({ ...opts, startRev: snap.rev });
  try {
    for (const [type, rows] of snap.types) {
      for (const [key, value] of rows) {
        const where = `${keys.objectsStem}${type} "${key}"`;
        try {
          const { rev, json } = splitStored(value, where);
          state.load(key, decodeObject(json, rev, where));
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
