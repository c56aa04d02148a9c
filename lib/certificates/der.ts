// A minimal DER reader and writer: enough ASN.1 to read PKCS#10 requests and
// to write X.509 certificates. The reader keeps byte offsets so a signed part
// (certificationRequestInfo) is verified over the exact bytes the client sent,
// never over a re-encoding of them.

/** One tag-length-value of a DER buffer: `start` at the tag, `body` at the contents, `end` after them. */
export interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly body: number;
  readonly end: number;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** Reads the TLV at `off`; throws on anything that is not well-formed DER within `limit`. */
export function readTlv(buf: Uint8Array, off: number, limit = buf.length): Tlv {
  if (off + 2 > limit) throw new Error('asn1: truncated element');
  const tag = buf[off]!;
  if ((tag & 0x1f) === 0x1f) throw new Error('asn1: high-tag-number form is not supported');
  let len = buf[off + 1]!;
  let body = off + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || body + n > limit) throw new Error('asn1: invalid length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[body + i]!;
    body += n;
  }
  if (body + len > limit) throw new Error('asn1: truncated element');
  return { tag, start: off, body, end: body + len };
}

/** The elements inside a constructed TLV. */
export function children(buf: Uint8Array, t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let off = t.body; off < t.end;) {
    const c = readTlv(buf, off, t.end);
    out.push(c);
    off = c.end;
  }
  return out;
}

export function expectTag(t: Tlv | undefined, tag: number, what: string): Tlv {
  if (!t || t.tag !== tag) throw new Error(`asn1: malformed ${what}`);
  return t;
}

export function decodeOid(buf: Uint8Array, t: Tlv): string {
  const parts: number[] = [];
  let v = 0;
  for (let i = t.body; i < t.end; i++) {
    v = v * 128 + (buf[i]! & 0x7f);
    if (!(buf[i]! & 0x80)) {
      if (parts.length === 0) parts.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

export const bytesOf = (buf: Uint8Array, t: Tlv): Buffer => Buffer.from(buf.subarray(t.body, t.end));
export const rawOf = (buf: Uint8Array, t: Tlv): Buffer => Buffer.from(buf.subarray(t.start, t.end));

// ---- writer ----

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export const seq = (...items: Buffer[]): Buffer => tlv(TAG.SEQUENCE, ...items);
export const octets = (b: Buffer): Buffer => tlv(TAG.OCTET_STRING, b);
export const bitString = (b: Buffer, unusedBits = 0): Buffer => tlv(TAG.BIT_STRING, Buffer.from([unusedBits]), b);
export const bool = (v: boolean): Buffer => tlv(TAG.BOOLEAN, Buffer.from([v ? 0xff : 0]));
/** [n] EXPLICIT (constructed context tag). */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);

/** A non-negative INTEGER from big-endian magnitude bytes. */
export function unsignedInt(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const m = b.subarray(i);
  return tlv(TAG.INTEGER, m[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out: number[] = [a! * 40 + b!];
  for (const n of rest) {
    const chunk: number[] = [n! & 0x7f];
    for (let v = Math.floor(n! / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(TAG.OID, Buffer.from(out));
}

/** X.509 Time: UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
export function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-11-29T09:26:22.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z'; // 20261129092622Z
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(TAG.UTC_TIME, Buffer.from(digits.slice(2), 'latin1')) : tlv(TAG.GENERALIZED_TIME, Buffer.from(digits, 'latin1'));
}
