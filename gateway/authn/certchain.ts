// Verifies a TLS client's certificate chain against one CA bundle, in our own
// code rather than OpenSSL's handshake result: the TLS server asks for
// certificates from the union of several bundles (--client-ca-file and
// --requestheader-client-ca-file), so "OpenSSL accepted it" no longer says
// which bundle a certificate chains to. Checks signatures up to an anchor of
// this bundle, every validity window, CA flags on issuers, and the clientAuth
// extended key usage of the leaf when it has one.
import { X509Certificate } from 'node:crypto';
import { ConfigError } from '../../lib/config/error.js';
import type { DetailedPeerCertificate, PeerCertificate, TLSSocket } from 'node:tls';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
const MAX_DEPTH = 10;

/** Why a client's chain is refused (a request's 401, not a configuration problem). */
export class CertChainError extends Error {}

/**
 * A CA bundle as read from its files: the PEM texts (the TLS layer's `ca`)
 * and the parsed anchors (chain checks). Never changed: a reload makes a new
 * one, so a decision can remember the bundle it was made under.
 */
export interface CaBundle {
  readonly pems: readonly string[];
  readonly anchors: readonly X509Certificate[];
}

/** The bundle in force: a reload replaces `current` whole, and a request reads it once. */
export interface CurrentCaBundle {
  readonly current: CaBundle;
}

/** Parses one PEM text per file into a bundle; throws a ConfigError naming `what` (the flag) on junk. */
export function caBundle(pems: readonly string[], what: string): CaBundle {
  return Object.freeze({ pems: Object.freeze([...pems]), anchors: Object.freeze(parseCaBundle(pems, what)) });
}

/** Splits a PEM bundle (one or more files' text) into certificates; throws naming the file on junk. */
export function parseCaBundle(pems: readonly string[], what: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const pem of pems) {
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length === 0) throw new ConfigError('no PEM certificate found', { flag: what });
    for (const b of blocks) {
      try {
        out.push(new X509Certificate(b));
      } catch (err) {
        throw new ConfigError(`invalid certificate: ${err instanceof Error ? err.message : String(err)}`, { flag: what });
      }
    }
  }
  return out;
}

/** The peer's certificate and the ones it sent along (as Node exposes them), leaf first; [] = no certificate. */
export function peerChain(socket: TLSSocket): { leaf: DetailedPeerCertificate; chain: X509Certificate[] } | undefined {
  const leaf = socket.getPeerCertificate(true);
  if (!leaf || !leaf.raw) return undefined;
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let c: DetailedPeerCertificate | undefined = leaf;
  while (c?.raw && !seen.has(c.fingerprint256) && chain.length <= MAX_DEPTH) {
    seen.add(c.fingerprint256);
    chain.push(new X509Certificate(c.raw));
    c = c.issuerCertificate;
  }
  return { leaf, chain };
}

/**
 * The peer's leaf certificate only: getPeerCertificate(false) costs about a
 * tenth of the detailed chain (which Node builds as JS objects, and which is
 * most of a new mTLS connection's cost in Gatehouse). peerIntermediates gives
 * the rest when the leaf does not chain to an anchor by itself.
 */
export function peerLeaf(socket: TLSSocket): { leaf: PeerCertificate; cert: X509Certificate } | undefined {
  const leaf = socket.getPeerCertificate(false);
  if (!leaf || !leaf.raw) return undefined;
  return { leaf, cert: new X509Certificate(leaf.raw) };
}

/** What peerChain gives after the leaf: the candidate intermediates. */
export function peerIntermediates(socket: TLSSocket): X509Certificate[] {
  return peerChain(socket)?.chain.slice(1) ?? [];
}

function within(cert: X509Certificate, now: number, what: string): void {
  if (now < Date.parse(cert.validFrom)) throw new CertChainError(`${what} is not valid before ${cert.validFrom}`);
  if (now > Date.parse(cert.validTo)) throw new CertChainError(`${what} expired at ${cert.validTo}`);
}

function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * Verifies `chain` (leaf first, then whatever the client sent; those are only
 * candidate intermediates) against `anchors`. Returns the earliest notAfter of
 * the path, for caches; throws CertChainError saying why not. When the leaf
 * is not signed by an anchor and `chain` holds only the leaf, `intermediates`
 * (when given) supplies the candidates, so a caller can skip fetching them in
 * the common case of a leaf issued directly by a client CA.
 */
export function verifyClientChain(
  chain: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  now: number,
  intermediates?: () => readonly X509Certificate[],
): number {
  const leaf = chain[0];
  if (!leaf) throw new CertChainError('no client certificate');
  within(leaf, now, 'client certificate');
  const eku = leaf.keyUsage;
  if (eku && eku.length > 0 && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) {
    throw new CertChainError('client certificate is not valid for client authentication (extended key usage)');
  }
  let notAfter = Date.parse(leaf.validTo);
  let pool: X509Certificate[] | undefined = chain.length > 1 || !intermediates ? chain.slice(1) : undefined;
  let current = leaf;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const anchor = anchors.find((a) => signedBy(current, a));
    if (anchor) {
      within(anchor, now, `CA certificate "${anchor.subject.replace(/\n/g, ', ')}"`);
      return Math.min(notAfter, Date.parse(anchor.validTo));
    }
    pool ??= [...intermediates!()];
    const i = pool.findIndex((p) => p.ca && signedBy(current, p));
    if (i < 0) throw new CertChainError('client certificate is not signed by a trusted CA');
    const next = pool.splice(i, 1)[0]!;
    within(next, now, 'intermediate CA certificate');
    notAfter = Math.min(notAfter, Date.parse(next.validTo));
    current = next;
  }
  throw new CertChainError('client certificate chain is too long');
}
