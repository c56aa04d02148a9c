// Recovery of a file store directory at open: load the snapshot, replay the
// log records newer than it, truncate a torn tail. Fails with `corrupt` rather
// than guess when acknowledged data is damaged.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './types.js';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import { goEscapedOffsets, keptCopy, rememberListBytes } from '../../../lib/api/json.js';
import type { KObject } from '../../../lib/api/meta.js';
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
    // The state keeps each object as its list piece (kept.ts), the text it was loaded from: one form.
    const snapPieces = snapBuf ? new LoadedPieces(snapBuf) : undefined;
    for (const [key, obj, bytes, start, end] of snap.objects) {
      state.load(key, (start >= 0 ? snapPieces?.pieceOf(obj, start, end) : undefined) ?? obj);
      sizes.set(key, bytes);
    }
    const logPath = join(dir, LOG);
    const logBuf = (await readIfExists(logPath)) ?? Buffer.alloc(0);
    // Every record's object becomes a view of the file (its piece); those still live are copied out after
    // the replay when they are not most of the file (a log of many dead records is not kept for them).
    const logPieces = new LoadedPieces(logBuf);
    const fromLog = new Map<string, Buffer>();
    const { validLength } = scanLog(logBuf, logPath, (rec) => {
      if (rec.rev <= snap.rev) return; // already in the snapshot (compaction stopped before truncating)
      if (!rec.object && !state.get(rec.key)) {
        throw new StoreError('corrupt', `corrupt store file "${logPath}": delete of missing key "${rec.key}" at revision ${rec.rev}`);
      }
      const piece = rec.object !== undefined && rec.textStart !== undefined && rec.textEnd !== undefined ? logPieces.pieceOf(rec.object, rec.textStart, rec.textEnd) : undefined;
      // Replayed events keep their commit time, so watch history survives a restart within the window.
      state.replay(rec.key, rec.rev, rec.object, rec.at, piece);
      if (piece) fromLog.set(rec.key, piece);
      else fromLog.delete(rec.key);
      if (rec.object) sizes.set(rec.key, rec.bytes);
      else sizes.delete(rec.key);
    });
    let liveBytes = 0;
    for (const piece of fromLog.values()) liveBytes += piece.length;
    if (liveBytes * 4 < logBuf.length * 3) for (const [key, piece] of fromLog) state.load(key, keptCopy(piece));
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

/**
 * Loaded objects' list pieces: the text each was loaded from (the files hold JSON.stringify's text of it,
 * which is goJson's where no character Go escapes stands in it), so nothing is serialized again and the
 * state keeps the bytes alone. They are views of the file's buffer, the byte after each text (its line's
 * closing `}`) becoming the piece's comma (the buffer is read only here): no copy and no new memory outside
 * the heap, whose growth by ~60 MB at 100,000 objects started a major GC in the open (+0.3–0.4 s of CPU).
 */
class LoadedPieces {
  private readonly escaped: EscapedRanges;
  constructor(private readonly buf: Buffer) {
    this.escaped = new EscapedRanges(buf);
  }

  /** obj's piece from buf[start, end), asked in ascending order; undefined when the text holds a character Go escapes. */
  pieceOf(obj: KObject, start: number, end: number): Buffer | undefined {
    if (this.escaped.within(start, end)) return undefined;
    this.buf[end] = 0x2c; // ','
    return rememberListBytes(obj, this.buf.subarray(start, end + 1));
  }
}

/** Whether a range of a file holds a character Go escapes, asked for ranges in ascending order. */
class EscapedRanges {
  private readonly at: number[];
  private i = 0;
  constructor(buf: Buffer) {
    this.at = goEscapedOffsets(buf);
  }
  within(start: number, end: number): boolean {
    while (this.i < this.at.length && this.at[this.i]! < start) this.i++;
    return this.i < this.at.length && this.at[this.i]! < end;
  }
}
