// Recovery of a file store directory at open: load the snapshot, replay the
// log records newer than it, truncate a torn tail. Fails with `corrupt` rather
// than guess when acknowledged data is damaged.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from './types.js';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import { goEscapedOffsets, rememberJsonBytes, rememberListBytes } from '../../../lib/api/json.js';
import type { KObject } from '../../../lib/api/meta.js';
import { parseSnapshot, scanLog } from './file-format.js';
import type { LogRecord, Snapshot } from './file-format.js';
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
      state.load(key, obj);
      sizes.set(key, bytes);
    }
    const logPath = join(dir, LOG);
    const logBuf = (await readIfExists(logPath)) ?? Buffer.alloc(0);
    const { records, validLength } = scanLog(logBuf, logPath);
    const replaced = new Set<KObject>();
    for (const rec of records) {
      if (rec.rev <= snap.rev) continue; // already in the snapshot (compaction stopped before truncating)
      if (!rec.object && !state.get(rec.key)) {
        throw new StoreError('corrupt', `corrupt store file "${logPath}": delete of missing key "${rec.key}" at revision ${rec.rev}`);
      }
      // Replayed events keep their commit time, so watch history survives a restart within the window.
      const ev = state.commit(rec.key, rec.rev, rec.object, rec.at);
      if (ev.prev) replaced.add(ev.prev);
      if (rec.object) sizes.set(rec.key, rec.bytes);
      else sizes.delete(rec.key);
    }
    rememberLoadedText(snapBuf, snap.objects, logBuf, records, snap.rev, replaced);
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
 * Each live object's list bytes are the text it was loaded from (the files hold JSON.stringify's text of
 * it), so the first lists after a restart serialize nothing, as the memory store's reuse its creates'
 * text. Only live objects' text is kept: `replaced` holds the objects a later record replaced or deleted.
 */
function rememberLoadedText(
  snapBuf: Buffer | undefined,
  objects: Snapshot['objects'],
  logBuf: Buffer,
  records: readonly LogRecord[],
  snapRev: number,
  replaced: ReadonlySet<KObject>,
): void {
  if (snapBuf) {
    const texts: [KObject, number, number][] = [];
    for (const [, obj, , start, end] of objects) if (start >= 0 && !replaced.has(obj)) texts.push([obj, start, end]);
    rememberTexts(snapBuf, texts);
  }
  const texts: [KObject, number, number][] = [];
  for (const rec of records) {
    const obj = rec.object;
    if (obj === undefined || rec.rev <= snapRev || rec.textStart === undefined || rec.textEnd === undefined || replaced.has(obj)) continue;
    texts.push([obj, rec.textStart, rec.textEnd]);
  }
  rememberTexts(logBuf, texts);
}

/**
 * The texts' bytes as views of the file's buffer when they are most of it: the byte after each text, its
 * line's closing `}`, becomes the piece's comma (the buffer is read only here). No copy, and no new
 * memory outside the heap, whose growth by ~60 MB at 100,000 objects started a major GC in the open
 * (+0.3–0.4 s of CPU). A buffer mostly of other bytes (a log of many dead records) is not kept: the
 * texts are copied out.
 */
function rememberTexts(buf: Buffer, texts: readonly [KObject, number, number][]): void {
  let bytes = 0;
  for (const [, start, end] of texts) bytes += end - start + 1;
  const view = bytes * 4 >= buf.length * 3;
  const escaped = new EscapedRanges(buf);
  for (const [obj, start, end] of texts) {
    if (escaped.within(start, end)) continue;
    if (!view) rememberJsonBytes(obj, buf, start, end);
    else {
      buf[end] = 0x2c; // ','
      rememberListBytes(obj, buf.subarray(start, end + 1));
    }
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
