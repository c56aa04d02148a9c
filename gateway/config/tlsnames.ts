// --tls-min-version and --tls-cipher-suites take Go's crypto/tls names, as
// kube-apiserver and kube-rbac-proxy do (their manifests list them); Node
// takes OpenSSL's. Go always offers its three TLS 1.3 suites whatever the
// list says, so the OpenSSL list always ends with them. Suites Go marks
// insecure (RC4, 3DES, CBC-SHA256 with RSA key exchange) are refused.
import { ConfigError } from '../../lib/config/error.js';

const SUITES: Readonly<Record<string, string>> = Object.freeze({
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: 'ECDHE-ECDSA-AES128-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: 'ECDHE-RSA-AES128-SHA256',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  // TLS 1.3 names are accepted (Go ignores them: always on).
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
});

const INSECURE = /RC4|3DES|_RSA_WITH_AES_128_CBC_SHA256$/;
const TLS13 = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/** Go suite names → an OpenSSL cipher list (Node's `ciphers`), TLS 1.3's always included. */
export function opensslCiphers(goNames: readonly string[]): string {
  const out: string[] = [];
  for (const n of goNames) {
    if (INSECURE.test(n)) throw new ConfigError('an insecure cipher suite is not offered', { value: n });
    const o = Object.hasOwn(SUITES, n) ? SUITES[n] : undefined;
    if (o === undefined) throw new ConfigError('not a Go crypto/tls cipher suite name (such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)', { value: n });
    if (!out.includes(o)) out.push(o);
  }
  for (const t of TLS13) if (!out.includes(t)) out.push(t);
  return out.join(':');
}

export type TlsVersion = 'TLSv1.2' | 'TLSv1.3';

/** Go's version names; below TLS 1.2 is refused (Gatehouse never offers it). */
export function tlsVersion(goName: string): TlsVersion {
  if (goName === 'VersionTLS12') return 'TLSv1.2';
  if (goName === 'VersionTLS13') return 'TLSv1.3';
  if (goName === 'VersionTLS10' || goName === 'VersionTLS11') throw new ConfigError('TLS below 1.2 is never offered');
  throw new ConfigError('must be VersionTLS12 or VersionTLS13');
}
