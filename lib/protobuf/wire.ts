// The few wire-format pieces the response encoders assemble by hand, so a
// list, an envelope or a watch frame is a concatenation of already encoded
// messages rather than a second encode of every item: a field key with its
// length, and varints written in place.

const LEN = 2; // wire type of length-delimited fields (bytes, strings, messages)

/** The key of length-delimited field `field` followed by the varint `len`. */
export function lenPrefix(field: number, len: number): Buffer {
  const out: number[] = [(field << 3) | LEN];
  let v = len;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

/** The bytes of varint `v` (< 2^32). */
export const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/** Writes varint `v` (< 2^32) into `buf` at `at`; returns the offset after it. */
export function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v > 0x7f) {
    buf[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[at++] = v;
  return at;
}
