// The floor of a CertificateSigningRequest create's signature check: per
// request, with every request its own key (as in real use), the CPU time of
// the key import alone (the cheapest form spki.ts uses, and the generic SPKI
// decoder), of the first verify with a just-imported key alone, of import plus
// verify (what no parser can avoid), of the same with the CPU caches cold
// (a server's other work between two creates evicts OpenSSL's tables: here an
// 8 MiB walk before each request, its own cost subtracted), of import plus
// verify as a create's prevalidate does them (importSpkiAsync: P-256 as
// WebCrypto's raw point, awaited; the other keys as importSpki), and of
// parseCsr (PEM, DER walk, names, import, verify). CPU time of this process,
// not wall time: the machine is shared. `node --import tsx bench/csr-floor.ts`; also run by bench/csr.ts.
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { bitString, oid, seq, tlv, TAG } from '../lib/certificates/der.js';
import { parseCsr } from '../lib/certificates/csr.js';
import { importSpki, importSpkiAsync } from '../lib/certificates/spki.js';
import { readTlv } from '../lib/certificates/der.js';

interface Algorithm {
  readonly name: string;
  readonly count: number;
  keyPair(): { privateKey: KeyObject; publicKey: KeyObject };
  /** signatureAlgorithm OID and digest (null: the key type decides, Ed25519). */
  readonly sigOid: string;
  readonly digest: string | null;
}

const ALGORITHMS: readonly Algorithm[] = [
  { name: 'ECDSA P-256', count: 400, keyPair: () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }), sigOid: '1.2.840.10045.4.3.2', digest: 'sha256' },
  { name: 'ECDSA P-384', count: 200, keyPair: () => generateKeyPairSync('ec', { namedCurve: 'secp384r1' }), sigOid: '1.2.840.10045.4.3.3', digest: 'sha384' },
  // RSA keys take tens of ms each to make: fewer of them, read again in later rounds (each import is still fresh).
  { name: 'RSA 2048', count: 40, keyPair: () => generateKeyPairSync('rsa', { modulusLength: 2048 }), sigOid: '1.2.840.113549.1.1.11', digest: 'sha256' },
  { name: 'Ed25519', count: 400, keyPair: () => generateKeyPairSync('ed25519'), sigOid: '1.3.101.112', digest: null },
];

interface Sample {
  readonly pem: string;
  readonly spki: Buffer;
  readonly info: Buffer;
  readonly signature: Buffer;
  readonly digest: string | null;
}

function sample(alg: Algorithm, i: number): Sample {
  const { privateKey, publicKey } = alg.keyPair();
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const subject = seq(tlv(TAG.SET, seq(oid('2.5.4.3'), tlv(TAG.UTF8_STRING, Buffer.from(`floor-${i}`)))));
  const info = seq(tlv(TAG.INTEGER, Buffer.from([0])), subject, spki, Buffer.from([0xa0, 0]));
  const signature = sign(alg.digest, info, privateKey);
  const der = seq(info, seq(oid(alg.sigOid)), bitString(signature));
  const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
  return { pem, spki, info, signature, digest: alg.digest };
}

/** CPU µs per call of `f` over every sample, median of `rounds` rounds. */
function cpuMicros(samples: readonly Sample[], rounds: number, prepare: () => void, f: (s: Sample, i: number) => unknown): number {
  const per: number[] = [];
  for (let r = 0; r < rounds; r++) {
    prepare();
    const start = process.cpuUsage();
    samples.forEach((s, i) => f(s, i));
    const used = process.cpuUsage(start);
    per.push((used.user + used.system) / samples.length);
  }
  return per.sort((a, b) => a - b)[Math.floor(per.length / 2)]!;
}

/** cpuMicros for an asynchronous `f`, awaited one request at a time. */
async function cpuMicrosAsync(samples: readonly Sample[], rounds: number, f: (s: Sample) => Promise<unknown>): Promise<number> {
  const per: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage();
    for (const s of samples) await f(s);
    const used = process.cpuUsage(start);
    per.push((used.user + used.system) / samples.length);
  }
  return per.sort((a, b) => a - b)[Math.floor(per.length / 2)]!;
}

export interface FloorRow {
  readonly algorithm: string;
  readonly importCheapest: number;
  readonly importSpki: number;
  readonly verifyFirst: number;
  readonly importAndVerify: number;
  readonly importAndVerifyCold: number;
  /** importSpkiAsync then verify, awaited (a create's prevalidate). */
  readonly importAndVerifyAsync: number;
  readonly parseCsr: number;
}

/** Larger than a core's L2 cache (2 MiB here), smaller than the shared L3. */
const EVICT = new Uint32Array((8 << 20) / 4);

function evictCaches(): number {
  let sum = 0;
  // One read and write per 64-byte line.
  for (let i = 0; i < EVICT.length; i += 16) sum += EVICT[i]!++;
  return sum;
}

export async function csrFloor(rounds = 5): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  for (const alg of ALGORITHMS) {
    const samples = Array.from({ length: alg.count }, (_, i) => sample(alg, i));
    const cheapest = (s: Sample) => importSpki(s.spki, readTlv(s.spki, 0)).key;
    const imported = async (s: Sample) => (await importSpkiAsync(s.spki, readTlv(s.spki, 0))).key;
    let keys: KeyObject[] = [];
    const fresh = () => (keys = samples.map(cheapest));
    const none = () => undefined;
    // One unmeasured pass of each: the first call of a path compiles it.
    for (const s of samples.slice(0, 20)) parseCsr(s.pem);
    rows.push({
      algorithm: alg.name,
      importCheapest: cpuMicros(samples, rounds, none, cheapest),
      importSpki: cpuMicros(samples, rounds, none, (s) => createPublicKey({ key: s.spki, format: 'der', type: 'spki' })),
      verifyFirst: cpuMicros(samples, rounds, fresh, (s, i) => verify(s.digest, s.info, keys[i]!, s.signature)),
      importAndVerify: cpuMicros(samples, rounds, none, (s) => verify(s.digest, s.info, cheapest(s), s.signature)),
      importAndVerifyCold:
        cpuMicros(samples, rounds, none, (s) => evictCaches() + Number(verify(s.digest, s.info, cheapest(s), s.signature))) -
        cpuMicros(samples, rounds, none, evictCaches),
      importAndVerifyAsync: await cpuMicrosAsync(samples, rounds, async (s) => verify(s.digest, s.info, await imported(s), s.signature)),
      parseCsr: cpuMicros(samples, rounds, none, (s) => parseCsr(s.pem)),
    });
  }
  return rows;
}

export function printFloor(rows: readonly FloorRow[]): void {
  console.log('  signature check floor, CPU µs per request (each its own key; median of 5 rounds)');
  const heads = ['import', 'SPKI import', '1st verify', 'import+verify', 'cold', 'async i+v', 'parseCsr'];
  console.log(`  ${'key'.padEnd(14)}${heads.map((h) => h.padStart(14)).join('')}`);
  for (const r of rows) {
    const cells = [r.importCheapest, r.importSpki, r.verifyFirst, r.importAndVerify, r.importAndVerifyCold, r.importAndVerifyAsync, r.parseCsr].map((v) =>
      v.toFixed(0).padStart(14),
    );
    console.log(`  ${r.algorithm.padEnd(14)}${cells.join('')}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printFloor(await csrFloor());
