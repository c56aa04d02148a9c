// The few wire-format pieces the response encoders assemble by hand, so a
// list or an envelope is a concatenation of already encoded messages rather
// than a second encode of every item: a field key with its length, and the
// 4-byte big-endian frame length of a watch stream.

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

/** The frame header of one watch event (apimachinery's length-delimited framer). */
export function frameHeader(len: number): Buffer {
  const h = Buffer.allocUnsafe(4);
  h.writeUInt32BE(len, 0);
  return h;
}
