// A real OpenID provider for the OIDC tests: `oidc-provider` over HTTPS with
// its own test CA, serving its real discovery document and JWKS. Tokens are
// signed with the same private JWK the provider is configured with (driving
// a full login flow adds nothing to what the API server verifies).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';

export interface SigningKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
}

export interface TestIdp {
  readonly url: string;
  readonly port: number;
  readonly ca: CertKeyPair;
  /** The CA certificate written to a file (for --oidc-ca-file). */
  readonly caFile: string;
  /** Requests served, by path. */
  readonly hits: Map<string, number>;
  readonly keys: SigningKey[];
  /** A signed id_token: iss, aud, iat and exp filled in unless given. */
  sign(claims: JWTPayload, opts?: { kid?: string; expiresInSec?: number; header?: Record<string, unknown> }): Promise<string>;
  /** Publishes a new signing key (the old one stays published) and signs with it from now on. */
  rotate(): Promise<SigningKey>;
  listen(): Promise<void>;
  close(): Promise<void>;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = privateJwk;
  return { kid, privateJwk, publicJwk };
}

function provider(issuer: string, keys: SigningKey[]): Provider {
  return new Provider(issuer, {
    jwks: { keys: keys.map((k) => k.privateJwk) },
    clients: [{ client_id: 'gatehouse', client_secret: 'not-a-secret', redirect_uris: ['https://127.0.0.1/callback'] }],
    cookies: { keys: ['test-cookie-key'] },
  });
}

/** Starts the provider on a loopback port; with `listen: false` the port is reserved but nothing answers yet. */
export async function startIdp(dir: string, opts: { listen?: boolean; audience?: string } = {}): Promise<TestIdp> {
  const ca = generateCa('test-idp-ca');
  const serving = generateServingCert(ca);
  const caFile = join(dir, `idp-ca-${randomUUID()}.crt`);
  await writeFile(caFile, ca.certPem);
  const hits = new Map<string, number>();
  const keys = [await newKey()];
  let current: Provider | undefined;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    void current!.callback()(req, res);
  };
  let server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `https://127.0.0.1:${port}`;
  current = provider(url, keys);
  if (opts.listen === false) await new Promise<void>((resolve) => server.close(() => resolve()));
  const audience = opts.audience ?? 'gatehouse';

  return {
    url,
    port,
    ca,
    caFile,
    hits,
    keys,
    async sign(claims, o = {}) {
      const key = o.kid ? (keys.find((k) => k.kid === o.kid) ?? keys.at(-1)!) : keys.at(-1)!;
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({ iss: url, aud: audience, iat: now, exp: now + (o.expiresInSec ?? 300), ...claims }).setProtectedHeader({
        alg: 'RS256',
        kid: o.kid ?? key.kid,
        typ: 'JWT',
        ...o.header,
      });
      return jwt.sign(await importJWK(key.privateJwk, 'RS256'));
    },
    async rotate() {
      const k = await newKey();
      keys.push(k);
      current = provider(url, keys);
      return k;
    },
    async listen() {
      server = createServer({ cert: serving.certPem, key: serving.keyPem }, handler);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    async close() {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
