// The signature check of a compact JWS with node:crypto's one-shot verify,
// scheduled one of two ways (SignatureThreads):
//   'pool' — each check is a job on libuv's thread pool: while RSA runs there
//     the event loop goes on reading and answering other requests, and with
//     more than one core the checks spread over the pool's threads;
//   'loop' — checks that arrive in one event-loop turn are made together,
//     synchronously, right after it (setImmediate), at most BATCH_MAX per turn.
//     With one usable core the pool's threads run on the loop's core anyway,
//     and each job's hand-off and wake-ups cost more than they overlap; the
//     batch keeps what the pool gave (answers leave together, after the turn)
//     without the hand-offs. bench/authn.ts, all-miss through the full stack on
//     one pinned core: 83–94 µs of server CPU per request with the pool, 71–78
//     with the batch (46–52% → 55–62% of jose's rate per core); bench/micro.ts,
//     the verifier alone on one core, 32 in flight: 51.9–62.9 µs of process CPU
//     per check with the pool, 34.7–43.6 µs with the batch.
// The schedule is an option of ServiceAccountJwtVerifier (default: by the
// cores this process may use), so both can be measured.
// Not jose: its WebCrypto path costs about twice the CPU per RS256 token
// (promises, WebIDL checks).
import { availableParallelism } from 'node:os';
import { constants, verify as verifySignature, type KeyObject, type VerifyKeyObjectInput } from 'node:crypto';
import { ownValue } from '../../lib/api/own.js';

export type SignatureThreads = 'pool' | 'loop';

/** The pool when another core can run its jobs (availableParallelism honours CPU affinity), else the loop. */
export function defaultSignatureThreads(): SignatureThreads {
  return availableParallelism() > 1 ? 'pool' : 'loop';
}

/** A compact JWS of strict base64url segments, as jose requires: one pass over the token instead of one per segment. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const HASHES: Readonly<Record<string, string>> = { '256': 'sha256', '384': 'sha384', '512': 'sha512' };
/** What jose requires of RSA keys for RS* and PS*. */
const MIN_RSA_BITS = 2048;
/** At ~25 µs an RS256 check, a turn's batch holds the loop for 1.6 ms at most; the rest waits for the next turn. */
const BATCH_MAX = 64;

interface Check {
  hash: string;
  data: Buffer;
  input: VerifyKeyObjectInput;
  sig: Buffer;
  resolve: (ok: boolean) => void;
}

const queued: Check[] = [];

function runBatch(): void {
  const batch = queued.splice(0, BATCH_MAX);
  if (queued.length > 0) setImmediate(runBatch);
  for (const c of batch) {
    let ok = false;
    try {
      ok = verifySignature(c.hash, c.data, c.input, c.sig);
    } catch {
      ok = false; // a malformed signature for this key type is a failed check
    }
    c.resolve(ok);
  }
}

/** A compact JWS read once for its signature check, whatever the candidate keys. */
export interface PreparedJws {
  readonly hash: string;
  readonly family: string;
  readonly data: Buffer;
  readonly sig: Buffer;
}

/** The token's signing input and signature under alg, or undefined when it is not a compact JWS or alg is unknown. */
export function prepareJws(token: string, alg: string): PreparedJws | undefined {
  if (!COMPACT_JWS.test(token)) return undefined;
  const hash = ownValue(HASHES, alg.slice(2)) as string | undefined;
  if (hash === undefined) return undefined;
  const dot = token.lastIndexOf('.');
  return { hash, family: alg.slice(0, 2), data: Buffer.from(token.slice(0, dot), 'latin1'), sig: Buffer.from(token.slice(dot + 1), 'base64url') };
}

const DEFAULT_THREADS = defaultSignatureThreads();

/**
 * Whether the prepared signature verifies with key; false at once when the
 * algorithm family does not fit the key. The alg is already one the key may
 * verify (its allow-list by key type and curve).
 */
export function signatureValid(jws: PreparedJws, key: KeyObject, threads: SignatureThreads = DEFAULT_THREADS): Promise<boolean> | false {
  const { hash, family, data, sig } = jws;
  if ((family === 'RS' || family === 'PS') && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) return false;
  let input: VerifyKeyObjectInput;
  switch (family) {
    case 'RS':
      input = { key };
      break;
    case 'PS':
      input = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
      break;
    case 'ES':
      input = { key, dsaEncoding: 'ieee-p1363' };
      break;
    default:
      return false;
  }
  if (threads === 'loop') {
    return new Promise((resolve) => {
      if (queued.push({ hash, data, input, sig, resolve }) === 1) setImmediate(runBatch);
    });
  }
  return new Promise((resolve) => {
    try {
      verifySignature(hash, data, input, sig, (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}
