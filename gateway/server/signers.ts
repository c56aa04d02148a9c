// The csrsigning controller's CAs from the flags, as kube-controller-manager
// picks them: a per-signer pair for that signer, else the general pair for
// every kubernetes.io signer; without any flag, the dev PKI CA — the one the
// x509 authenticator trusts when no --client-ca-file is given — when it
// exists. Otherwise nothing is signed (as kube-controller-manager skips the
// controller without its CA files). kubernetes.io/legacy-unknown is never signed.
import { existsSync } from 'node:fs';
import type { CsrSigningConfig } from '../../backends/core/index.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { SigningCaSource, type SigningCaFiles } from '../../lib/certificates/signingca.js';
import { SIGNER_RULES } from '../../lib/certificates/signerrules.js';
import type { ServeOptions } from '../config/flags.js';
import { pairKeys, SIGNER_FLAGS } from '../config/options/csrsigning.js';

function pair(opts: ServeOptions, prefix: string): SigningCaFiles | undefined {
  const { cert, key } = pairKeys(prefix);
  const certFile = opts[cert] as string | undefined;
  const keyFile = opts[key] as string | undefined;
  return certFile && keyFile ? { certFile, keyFile } : undefined;
}

function defaultPair(opts: ServeOptions): SigningCaFiles | undefined {
  const general = pair(opts, '');
  if (general) return general;
  // The dev PKI CA is the one the x509 authenticator trusts only when it serves (no --tls-cert-file) without --client-ca-file.
  if (opts.clientCaFiles.length > 0 || (opts.tlsCertFile && opts.tlsPrivateKeyFile)) return undefined;
  const dev = devPkiPaths(opts.dataDir);
  return existsSync(dev.caCert) && existsSync(dev.caKey) ? { certFile: dev.caCert, keyFile: dev.caKey } : undefined;
}

export function csrSigningConfig(opts: ServeOptions, log: (msg: string) => void): CsrSigningConfig | undefined {
  const fallback = defaultPair(opts);
  const signers = new Map<string, SigningCaSource>();
  const shared = fallback && new SigningCaSource(fallback);
  for (const [prefix, signer] of SIGNER_FLAGS) {
    if (!SIGNER_RULES.has(signer)) continue;
    const own = pair(opts, prefix);
    if (own) signers.set(signer, new SigningCaSource(own));
    else if (shared) signers.set(signer, shared);
  }
  if (signers.size === 0) {
    log('csrsigning: no signing CA (--cluster-signing-cert-file/--cluster-signing-key-file); certificate requests are not signed');
    return undefined;
  }
  return { signers, maxDurationMs: opts.clusterSigningDurationMs };
}
