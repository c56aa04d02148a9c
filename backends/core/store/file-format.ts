// The on-disk formats of the file store. Both files are lines of
// `<crc32 of json, 8 hex digits> <json>\n`; JSON escapes newlines, so `\n`
// only ever ends a record.
//
//   log       {"r":rev,"b":batchStart,"t":commitMs,"k":key,"o":object}   a put
//             {"r":rev,"b":batchStart,"t":commitMs,"k":key,"d":1}        a delete
//   snapshot  {"v":1,"rev":N,"count":M} then M lines {"k":key,"o":object}
//
// `b` is the byte offset where the record's group-commit batch starts. A batch
// is written only after the previous one was fsynced, so a bad record at
// offset X followed by a good record with b > X means an acknowledged batch
// went bad on disk (corruption), while a bad record with no later batch is
// the torn tail of a write that was never acknowledged (truncate it).
import * as zlib from 'node:zlib';
import type { KObject } from '../../../lib/api/meta.js';
import { isPlainObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import { freezeStored } from '../../../lib/api/json.js';

const crc32: (data: Buffer) => number = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) : tableCrc32;

function tableCrc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    let c = (crc ^ byte) & 0xff;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    crc = (crc >>> 8) ^ c;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

export function encodeLine(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value));
  const head = Buffer.from(crc32(json).toString(16).padStart(8, '0') + ' ');
  return Buffer.concat([head, json, Buffer.from('\n')]);
}

/** The JSON value of the line in buf[start, nl), or undefined when it is damaged. */
function decodeLine(buf: Buffer, start: number, nl: number): unknown {
  if (nl - start < 10 || buf[start + 8] !== 0x20) return undefined;
  const crc = hex8(buf, start);
  if (crc < 0) return undefined;
  const json = buf.subarray(start + 9, nl);
  if (crc32(json) !== crc) return undefined;
  try {
    return JSON.parse(json.toString('utf8')) as unknown;
  } catch {
    return undefined; // a matching CRC over invalid JSON is still a damaged line
  }
}

/** The 8 lowercase hex digits at buf[at] as a number, or -1 (read in place: no string, no regex per line at replay). */
function hex8(buf: Buffer, at: number): number {
  let n = 0;
  for (let i = at; i < at + 8; i++) {
    const c = buf[i]!;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

export interface LogRecord {
  rev: number;
  batchStart: number;
  at: number;
  key: string;
  /**
   * Absent for a delete. Frozen as parsed (freezeStored), while the strings it replaces by shared copies
   * are still young: frozen after the whole scan they were ~40 MB of old-space garbage at 100,000 objects.
   */
  object?: KObject;
  /** The record's length in the log, newline included. */
  bytes: number;
  /** Where the object's JSON lies in the scanned buffer, [start, end) (objectText); absent for a delete. */
  textStart?: number;
  textEnd?: number;
}

/** What a log record is made of: the stamped object already serialised (once, when the write was accepted), none for a delete. */
export interface RecordInput {
  rev: number;
  at: number;
  key: string;
  json: string | undefined;
}

/** The 8 hex digits a line's head holds until its CRC is written over them. */
const CRC_PLACEHOLDER = '00000000';

/**
 * A batch's log lines as one Buffer. Each record's text is encoded to UTF-8
 * once: the lines are joined with a placeholder head and encoded together,
 * then each line's CRC is taken over its JSON's bytes in the Buffer and
 * written into its head (a CRC of the text encoded the text a second time).
 * `ends[i]` is the offset just past record i's newline.
 */
export function encodeBatch(batchStart: number, records: readonly RecordInput[]): { buf: Buffer; ends: number[] } {
  let text = '';
  for (const r of records) {
    const body = r.json === undefined ? '"d":1' : `"o":${r.json}`;
    text += `${CRC_PLACEHOLDER} {"r":${r.rev},"b":${batchStart},"t":${r.at},"k":${JSON.stringify(r.key)},${body}}\n`;
  }
  const buf = Buffer.from(text, 'utf8');
  const ends: number[] = [];
  let pos = 0;
  while (pos < buf.length) {
    // JSON escapes newlines: the first one after the head ends the line.
    const nl = buf.indexOf(0x0a, pos + 9);
    writeHex8(buf, pos, crc32(buf.subarray(pos + 9, nl)));
    pos = nl + 1;
    ends.push(pos);
  }
  return { buf, ends };
}

/** n as 8 lowercase hex digits at buf[at] (the inverse of hex8). */
function writeHex8(buf: Buffer, at: number, n: number): void {
  for (let i = at + 7; i >= at; i--) {
    const d = n & 15;
    buf[i] = d < 10 ? 0x30 + d : 0x57 + d;
    n >>>= 4;
  }
}

function isObject(v: unknown): v is KObject {
  return isPlainObject(v) && isPlainObject(v.metadata);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function toRecord(v: unknown, bytes: number): LogRecord | undefined {
  if (!isPlainObject(v) || !isCount(v.r) || !isCount(v.b) || typeof v.t !== 'number' || typeof v.k !== 'string') {
    return undefined;
  }
  const rec: LogRecord = { rev: v.r, batchStart: v.b, at: v.t, key: v.k, bytes };
  if (isObject(v.o)) rec.object = freezeStored(v.o);
  else if (v.d !== 1) return undefined;
  return rec;
}

const OBJECT_MEMBER = Buffer.from(',"o":');

/**
 * The start of the object's JSON in an intact line buf[start, nl) of either file, or -1; it ends at nl - 1,
 * before the line's closing `}`: `"o"` is the last member of every line that has one (encodeBatch,
 * encodeSnapshot). The key before it is a JSON string, in which `"` is always escaped, so the first
 * `,"o":` is the member's. The text is JSON.stringify's, as the object was when written.
 */
function objectText(buf: Buffer, start: number, nl: number): number {
  const at = buf.indexOf(OBJECT_MEMBER, start + 9);
  return at < 0 || at >= nl || buf[nl - 1] !== 0x7d ? -1 : at + OBJECT_MEMBER.length;
}

export interface ScannedLog {
  /** The intact records, in order; empty when they were handed to scanLog's `each` instead. */
  records: LogRecord[];
  /** Bytes of intact records; anything after is a torn tail to truncate. */
  validLength: number;
}

function corrupt(file: string, offset: number, why: string): StoreError {
  return new StoreError('corrupt', `corrupt store file "${file}" at offset ${offset}: ${why}`);
}

/**
 * The log's intact records. With `each`, each record is handed over as soon as it is read and none is kept:
 * a replay that keeps only part of what it parses (the state's list pieces) lets the rest die young, instead
 * of 100,000 parsed objects promoted together and left to the next full GC.
 */
export function scanLog(buf: Buffer, file: string, each?: (rec: LogRecord) => void): ScannedLog {
  const records: LogRecord[] = [];
  let pos = 0;
  let lastRev = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const rec = nl < 0 ? undefined : toRecord(decodeLine(buf, pos, nl), nl + 1 - pos);
    if (!rec) {
      if (nl >= 0 && laterBatchFollows(buf, nl + 1, pos)) throw corrupt(file, pos, 'damaged record');
      break; // torn tail of an unacknowledged batch
    }
    if (rec.rev <= lastRev) throw corrupt(file, pos, `revision ${rec.rev} after ${lastRev}`);
    lastRev = rec.rev;
    if (rec.object) {
      const at = objectText(buf, pos, nl);
      if (at >= 0) {
        rec.textStart = at;
        rec.textEnd = nl - 1;
      }
    }
    if (each) each(rec);
    else records.push(rec);
    pos = nl + 1;
  }
  return { records, validLength: pos };
}

/** Whether an intact record of a batch that started after offset `bad` exists from `from` on. */
function laterBatchFollows(buf: Buffer, from: number, bad: number): boolean {
  let pos = from;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) return false;
    const rec = toRecord(decodeLine(buf, pos, nl), nl + 1 - pos);
    if (rec && rec.batchStart > bad) return true;
    pos = nl + 1;
  }
  return false;
}

export interface Snapshot {
  rev: number;
  /** Key, object (frozen as parsed, as a log record's), the entry's length in the snapshot (newline included) and where the object's JSON lies in it, [start, end) (start -1: not found). */
  objects: [string, KObject, number, number, number][];
}

export function* encodeSnapshot(rev: number, entries: Iterable<[string, KObject]>, count: number): Generator<Buffer> {
  yield encodeLine({ v: 1, rev, count });
  for (const [k, o] of entries) yield encodeLine({ k, o });
}

export function parseSnapshot(buf: Buffer, file: string): Snapshot {
  let pos = 0;
  const next = (): unknown => {
    const nl = buf.indexOf(0x0a, pos);
    const value = nl < 0 ? undefined : decodeLine(buf, pos, nl);
    if (value === undefined) throw corrupt(file, pos, 'damaged line');
    pos = nl + 1;
    return value;
  };
  const head = next();
  if (!isPlainObject(head) || head.v !== 1 || !isCount(head.rev) || !isCount(head.count)) {
    throw corrupt(file, 0, 'bad header');
  }
  const objects: [string, KObject, number, number, number][] = [];
  for (let i = 0; i < head.count; i++) {
    const at = pos;
    const line = next();
    if (!isPlainObject(line) || typeof line.k !== 'string' || !isObject(line.o)) throw corrupt(file, at, 'bad entry');
    objects.push([line.k, freezeStored(line.o), pos - at, objectText(buf, at, pos - 1), pos - 2]);
  }
  if (pos !== buf.length) throw corrupt(file, pos, 'data after the last entry');
  return { rev: head.rev, objects };
}
