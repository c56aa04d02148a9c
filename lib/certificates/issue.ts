// Issues an X.509 certificate for a parsed request, as kube-controller-manager's
// csrsigning authority does: the request's subject, public key and subject
// alternative names, the usages the CertificateSigningRequest asked for, not a
// CA, notBefore backdated five minutes, notAfter never past the CA's. Written
// with the DER writer so any key type the request verified with (RSA, ECDSA,
// Ed25519) can be certified, and signed by node's crypto with the CA key.
import type { KeyObject, X509Certificate } from 'node:crypto';
import { oid, seq } from './der.js';
import type { ParsedCsr } from './csr.js';
import { usagesFor } from './usages.js';
import { authorityKeyId, basicConstraints, extension, issuerOf, randomSerial, sanExtension, signCertificate } from './x509.js';

export interface SigningCa {
  readonly cert: X509Certificate;
  readonly key: KeyObject;
}

export interface IssueOptions {
  readonly usages: readonly string[];
  /** Requested lifetime, already capped by the signer. */
  readonly ttlMs: number;
  readonly now: number;
}

const BACKDATE_MS = 5 * 60_000;

/** Signs a certificate for `csr`; returns its PEM. */
export function issueCertificate(ca: SigningCa, csr: ParsedCsr, o: IssueOptions): string {
  const issuer = issuerOf(ca.cert);
  const { keyUsageBits, extKeyUsageOids } = usagesFor(o.usages);
  const san = sanExtension(csr);
  return signCertificate(
    {
      serial: randomSerial(),
      issuer: issuer.subject,
      notBefore: o.now - BACKDATE_MS,
      notAfter: Math.min(o.now + o.ttlMs, Date.parse(ca.cert.validTo)),
      subject: csr.subjectDer,
      spki: csr.spkiDer,
      extensions: [
        ...(keyUsageBits ? [extension('2.5.29.15', true, keyUsageBits)] : []),
        ...(extKeyUsageOids.length ? [extension('2.5.29.37', false, seq(...extKeyUsageOids.map(oid)))] : []),
        basicConstraints(false),
        authorityKeyId(issuer.keyId),
        ...(san ? [san] : []),
      ],
    },
    ca.key,
  );
}
