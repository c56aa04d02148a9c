// Recovery of a file store directory at open: load the snapshot, replay the
// log records newer than it, truncate a torn tail. Fails with `corrupt` rather
// than guess when acknowledged data is damaged.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './types.js';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import { freezeStored } from '../../../lib/api/json.js';
import { parseSnapshot, scanLog } from './file-format.js';
import { fsyncDir, readIfExists } from './file-dir.js';
import { LogAppender } from './file-append.js';

export const LOG = 'log';
export const SNAPSHOT = 'snapshot';
export const SNAPSHOT_TMP = 'snapshot.tmp';

export interface Recovered {
  state: StoreState;
  /** Length of each live key's record (log line or snapshot entry): the live data, to weigh the log against. */
  sizes: Map<string, number>;
  /** The log, open for durable appends, ending after its last intact record. */
  log: LogAppender;
  logSize: number;
}

export async function recover(dir: string, opts: Omit<StateOptions, 'startRev'>): Promise<Recovered> {
  // A leftover temp snapshot is an interrupted compaction: the old snapshot + log still hold everything.
  await rm(join(dir, SNAPSHOT_TMP), { force: true });
  const snapPath = join(dir, SNAPSHOT);
  const snapBuf = await readIfExists(snapPath);
  const snap = snapBuf ? parseSnapshot(snapBuf, snapPath) : { rev: 0, objects: [] };
  const state = new StoreState({ ...opts, startRev: snap.rev });
  try {
    const sizes = new Map<string, number>();
    for (const [key, obj, bytes] of snap.objects) {
      state.load(key, freezeStored(obj));
      sizes.set(key, bytes);
    }
    const logPath = join(dir, LOG);
    const logBuf = (await readIfExists(logPath)) ?? Buffer.alloc(0);
    const { records, validLength } = scanLog(logBuf, logPath);
    for (const rec of records) {
      if (rec.rev <= snap.rev) continue; // already in the snapshot (compaction stopped before truncating)
      if (!rec.object && !state.get(rec.key)) {
        throw new StoreError('corrupt', `corrupt store file "${logPath}": delete of missing key "${rec.key}" at revision ${rec.rev}`);
      }
      // Replayed events keep their commit time, so watch history survives a restart within the window.
      state.commit(rec.key, rec.rev, rec.object && freezeStored(rec.object), rec.at);
      if (rec.object) sizes.set(rec.key, rec.bytes);
      else sizes.delete(rec.key);
    }
    const log = await LogAppender.open(logPath);
    try {
      if (validLength < logBuf.length) await log.truncate(validLength);
      await fsyncDir(dir); // the log file's directory entry, when this open created it
    } catch (err) {
      await log.close();
      throw err;
    }
    return { state, sizes, log, logSize: validLength };
  } catch (err) {
    state.close(new StoreError('unreachable', 'store failed to open'));
    throw err;
  }
}
