// A client certificate the proxy terminated and passed on, as the caller's
// credential: nginx's `$ssl_client_escaped_cert` (URL-encoded PEM) or
// Envoy's X-Forwarded-Client-Cert (`Cert="<URL-encoded PEM>"` element) in
// X-Forwarded-Client-Cert, or Traefik's passTLSClientCert
// (X-Forwarded-Tls-Client-Cert, base64 DER). Read only on a call from a
// trusted proxy (the endpoint checks that first), verified against
// --client-ca-file as a certificate on the connection would be (x509.ts):
// CN = user, each O = a group.
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AuthnError, type Authenticator, type AuthnResult } from '../authn/types.js';
import { CertChainError, verifyClientChain, type CurrentCaBundle } from '../authn/certchain.js';

const XFCC = 'x-forwarded-client-cert';
const TRAEFIK = 'x-forwarded-tls-client-cert';

function decode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    throw new AuthnError('forwarded-cert', 'the forwarded client certificate is not URL-encoded');
  }
}

/** The PEM text of the forwarded leaf, or undefined when none was forwarded. */
function forwardedPem(req: IncomingMessage): string | undefined {
  const x = req.headers[XFCC];
  if (typeof x === 'string' && x !== '') {
    // Envoy: `By=…;Hash=…;Cert="…"` (the last element is the hop nearest to us); nginx: the escaped PEM alone.
    const m = /(?:^|[;,])Cert="([^"]*)"\s*$/.exec(x);
    return decode(m ? m[1]! : x);
  }
  const t = req.headers[TRAEFIK];
  if (typeof t === 'string' && t !== '') {
    const b64 = decode(t).replace(/\s+/g, '');
    return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
  }
  return undefined;
}

export class ForwardedCertAuthenticator implements Authenticator {
  readonly name = 'forwarded-cert';
  constructor(
    private readonly cas: CurrentCaBundle,
    private readonly clock: () => number,
  ) {}

  authenticate(req: IncomingMessage): AuthnResult | null {
    const pem = forwardedPem(req);
    if (pem === undefined) return null;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      throw new AuthnError(this.name, 'the forwarded client certificate does not parse');
    }
    let until: number;
    try {
      until = verifyClientChain([cert], this.cas.current.anchors, this.clock());
    } catch (err) {
      if (err instanceof CertChainError) throw new AuthnError(this.name, `forwarded client certificate rejected: ${err.message}`);
      throw err;
    }
    const subject = parseSubject(cert.subject);
    const cn = subject.CN[0];
    if (!cn) throw new AuthnError(this.name, 'the forwarded client certificate has no common name');
    return Object.freeze({ user: Object.freeze({ username: cn, groups: Object.freeze([...subject.O]) as string[] }), expiresAt: until, method: this.name });
  }
}

/** X509Certificate.subject is `key=value` lines; a key may repeat (several O). */
function parseSubject(subject: string): { CN: string[]; O: string[] } {
  const out = { CN: [] as string[], O: [] as string[] };
  for (const line of subject.split('\n')) {
    const eq = line.indexOf('=');
    const k = line.slice(0, eq);
    if (k === 'CN' || k === 'O') out[k].push(line.slice(eq + 1));
  }
  return out;
}
