// certificates.k8s.io key usages: the names kube accepts and what each one
// becomes in an issued certificate (kube's keyUsagesFromStrings).
import { bitString } from './der.js';

/** keyUsage bit of each KeyUsage name (RFC 5280 4.2.1.3, bit 0 = digitalSignature). */
const KEY_USAGE_BITS: ReadonlyMap<string, number> = new Map([
  ['signing', 0],
  ['digital signature', 0],
  ['content commitment', 1],
  ['key encipherment', 2],
  ['data encipherment', 3],
  ['key agreement', 4],
  ['cert sign', 5],
  ['crl sign', 6],
  ['encipher only', 7],
  ['decipher only', 8],
]);

const EXT_KEY_USAGE_OIDS: ReadonlyMap<string, string> = new Map([
  ['any', '2.5.29.37.0'],
  ['server auth', '1.3.6.1.5.5.7.3.1'],
  ['client auth', '1.3.6.1.5.5.7.3.2'],
  ['code signing', '1.3.6.1.5.5.7.3.3'],
  ['email protection', '1.3.6.1.5.5.7.3.4'],
  ['s/mime', '1.3.6.1.5.5.7.3.4'],
  ['ipsec end system', '1.3.6.1.5.5.7.3.5'],
  ['ipsec tunnel', '1.3.6.1.5.5.7.3.6'],
  ['ipsec user', '1.3.6.1.5.5.7.3.7'],
  ['timestamping', '1.3.6.1.5.5.7.3.8'],
  ['ocsp signing', '1.3.6.1.5.5.7.3.9'],
  ['microsoft sgc', '1.3.6.1.4.1.311.10.3.3'],
  ['netscape sgc', '2.16.840.1.113730.4.1'],
]);

/** Every usage name kube's validation accepts, sorted as its error lists them. */
export const KNOWN_USAGES: readonly string[] = [...KEY_USAGE_BITS.keys(), ...EXT_KEY_USAGE_OIDS.keys()].sort();

export function isKnownUsage(u: string): boolean {
  return KEY_USAGE_BITS.has(u) || EXT_KEY_USAGE_OIDS.has(u);
}

/** The keyUsage extension's BIT STRING (undefined when no bit is set) and the extKeyUsage OIDs, without duplicates. */
export function usagesFor(usages: readonly string[]): { keyUsageBits: Buffer | undefined; extKeyUsageOids: string[] } {
  let bits = 0;
  const ext = new Set<string>();
  for (const u of usages) {
    const bit = KEY_USAGE_BITS.get(u);
    if (bit !== undefined) bits |= 1 << bit;
    const o = EXT_KEY_USAGE_OIDS.get(u);
    if (o !== undefined) ext.add(o);
  }
  return { keyUsageBits: bits ? keyUsageBitString(bits) : undefined, extKeyUsageOids: [...ext] };
}

/** DER BIT STRING of a keyUsage mask: bit 0 is the first bit, trailing zero bits dropped. */
function keyUsageBitString(mask: number): Buffer {
  let highest = 0;
  for (let b = 0; b <= 8; b++) if (mask & (1 << b)) highest = b;
  const byteCount = highest < 8 ? 1 : 2;
  const bytes = Buffer.alloc(byteCount);
  for (let b = 0; b <= highest; b++) if (mask & (1 << b)) bytes[b >> 3]! |= 0x80 >> (b & 7);
  const unused = byteCount * 8 - (highest + 1);
  return bitString(bytes, unused);
}
