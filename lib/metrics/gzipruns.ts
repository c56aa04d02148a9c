// One gzip member from runs of bytes, each run deflated on its own and kept
// while its parts stay the same objects: a scrape recompresses only the runs
// whose label sets moved since the last one. Each run is a raw deflate stream
// ended by a full flush (byte-aligned, no back-reference before its start), so
// the runs concatenate into one valid deflate stream; an empty final block,
// the combined CRC-32 and the length close the member (RFC 1951, RFC 1952).
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { crc32CombineShifted, crc32Shift } from './crc32combine.js';

/** Bytes of an exposition in parts; `key` (a stable object) lets the run's deflated form be kept until its parts change. */
export interface Run {
  readonly key?: object;
  readonly parts: readonly Buffer[];
}

interface Deflated {
  readonly parts: readonly Buffer[];
  readonly bytes: Buffer;
  readonly crc: number;
  readonly size: number;
  /** crc32Shift(size), kept: a scrape then combines each kept run's CRC with one multiplication. */
  readonly shift: number;
}

// ID1 ID2, deflate, no flags, no mtime, no extra flags, OS unix (as node:zlib's gzip writes).
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
/** A final, empty block with fixed codes: BFINAL=1, BTYPE=01, end-of-block. */
const FINAL = Buffer.from([0x03, 0x00]);

const kept = new WeakMap<object, Deflated>();

const sameParts = (a: readonly Buffer[], b: readonly Buffer[]) => a.length === b.length && a.every((p, i) => p === b[i]);

function deflate(parts: readonly Buffer[], level: number): Deflated {
  const raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return {
    parts,
    bytes: deflateRawSync(raw, { level, finishFlush: constants.Z_FULL_FLUSH }),
    crc: crc32(raw),
    size: raw.length,
    shift: crc32Shift(raw.length),
  };
}

/** The runs' bytes, in order, as one gzip member. */
export function gzipRuns(runs: readonly Run[], level: number): Buffer {
  const out: Buffer[] = [HEADER];
  let crc = 0;
  let size = 0;
  for (const run of runs) {
    if (run.parts.length === 0) continue;
    let d = run.key ? kept.get(run.key) : undefined;
    if (!d || !sameParts(d.parts, run.parts)) {
      d = deflate(run.parts, level);
      if (run.key) kept.set(run.key, d);
    }
    if (d.size === 0) continue;
    out.push(d.bytes);
    crc = crc32CombineShifted(crc, d.crc, d.shift);
    size += d.size;
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  out.push(FINAL, trailer);
  return Buffer.concat(out);
}
