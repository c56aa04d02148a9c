// A backend's answer arrives from undici as raw Buffers, one per header name and value; the Relay turns each into a
// string with Buffer#toString('latin1'), which is a C++ call that makes a new string every time (~0.8k instructions
// under callgrind, twelve a proxied GET: docs/decisions/2026-11-30-proxied-get-chain.md). A backend sends the same
// names in every answer, and mostly the same values (Content-Type, Cache-Control, APF's UIDs, Date for a second):
// the strings of the last ones are kept, and a field whose bytes equal a kept string is that string. Latin-1 maps
// every byte to the char code of the same value, so equal bytes are the string toString would make, exactly.

import { isHopByHopAnyCase } from './forwardrules.js';

/** A header name as a backend sent it, with what the Relay asks of it and the last value it had. */
export interface HeadField {
  readonly name: string;
  /** `isHopByHopAnyCase(name)`: never relayed. */
  readonly hopByHop: boolean;
  /** The last value of this name that was kept (short enough), to compare the next one with. */
  value: string | undefined;
}

/** Names longer than this are decoded every time (and not kept). */
const MAX_NAME = 64;
/** Values longer than this are decoded every time (and not kept). */
const MAX_VALUE = 128;
/** Names kept per length; past it the oldest of that length makes room (a backend choosing names cannot grow it). */
const PER_LENGTH = 4;

/** Kept names by length: at most MAX_NAME × PER_LENGTH fields, each with a value of MAX_VALUE bytes at most. */
const byLength: HeadField[][] = Array.from({ length: MAX_NAME + 1 }, () => []);
/** Per length, the slot the next new name takes once that length's list is full. */
const nextSlot: number[] = new Array<number>(MAX_NAME + 1).fill(0);

function sameBytes(b: Buffer, s: string): boolean {
  for (let i = 0; i < s.length; i++) if (b[i] !== s.charCodeAt(i)) return false;
  return true;
}

/** The field of a raw header name: a kept one when its bytes were seen before. */
export function headField(b: Buffer): HeadField {
  const n = b.length;
  if (n > MAX_NAME) return fresh(b.toString('latin1'));
  const list = byLength[n]!;
  for (let i = 0; i < list.length; i++) {
    const f = list[i]!;
    if (sameBytes(b, f.name)) return f;
  }
  const f = fresh(b.toString('latin1'));
  if (list.length < PER_LENGTH) list.push(f);
  else {
    const slot = nextSlot[n]!;
    list[slot] = f;
    nextSlot[n] = (slot + 1) % PER_LENGTH;
  }
  return f;
}

function fresh(name: string): HeadField {
  return { name, hopByHop: isHopByHopAnyCase(name), value: undefined };
}

/** The string of a raw header value of field `f`: its last value when the bytes are the same, else decoded (and kept when short). */
export function headValue(f: HeadField, b: Buffer): string {
  const last = f.value;
  if (last !== undefined && last.length === b.length && sameBytes(b, last)) return last;
  const v = b.toString('latin1');
  f.value = v.length <= MAX_VALUE ? v : undefined;
  return v;
}
