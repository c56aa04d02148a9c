// A real OpenID provider for the login tests: `oidc-provider` over HTTPS with
// its own test CA, its own login and consent pages (dev interactions, any
// password), device flow, refresh tokens and revocation, and one public
// native client `kubectl` with loopback redirects, as kubelogin registers.
// oidc-provider has no password grant; a small test-only one is registered
// beside it, and since its tokens are made here it also hands out the
// malformed ones the refusal tests need.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';

export const CLIENT_ID = 'kubectl';
export const CONFIDENTIAL_CLIENT_ID = 'robot';
export const CONFIDENTIAL_SECRET = 'robot-secret';
const ROBOT_RESOURCE = 'urn:gatehouse:robot';

interface Key {
  kid: string;
  privateJwk: JWK;
}

async function newKey(): Promise<Key> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface LoginIdp {
  readonly url: string;
  readonly caFile: string;
  /** base64 SPKI sha256 of the serving certificate, for Chromium's --ignore-certificate-errors-spki-list. */
  readonly spki: string;
  /** Requests served, by path. */
  readonly hits: Map<string, number>;
  /** Total requests served. */
  total(): number;
  /** Seconds an ID token issued from now on lives. */
  idTokenTtl: number;
  /** Passwords the password grant accepts, by username. */
  readonly passwords: Map<string, string>;
  /** An ID token signed with the provider's key (or `foreignKey`), claims filled in unless given. */
  sign(claims: JWTPayload, opts?: { foreignKey?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** Claims the password grant puts in its ID token for a username that asks for a broken one. */
const BROKEN: Record<string, (url: string) => JWTPayload> = {
  'wrong-audience': () => ({ aud: 'someone-else' }),
  'wrong-issuer': () => ({ iss: 'https://impostor.example' }),
};

export async function startLoginIdp(dir: string): Promise<LoginIdp> {
  const ca = generateCa('test-login-idp-ca');
  const serving: CertKeyPair = generateServingCert(ca);
  const caFile = join(dir, `login-idp-ca-${randomUUID()}.crt`);
  await writeFile(caFile, ca.certPem);
  const spki = createHash('sha256')
    .update(new X509Certificate(serving.certPem).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
  const key = await newKey();
  const foreign = await newKey();
  const hits = new Map<string, number>();
  const passwords = new Map<string, string>([['carol', 'carol-password']]);
  let total = 0;

  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const idp: LoginIdp = {
    url,
    caFile,
    spki,
    hits,
    total: () => total,
    idTokenTtl: 3600,
    passwords,
    async sign(claims, o = {}) {
      const k = o.foreignKey ? foreign : key;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: url, aud: CLIENT_ID, iat: now, exp: now + idp.idTokenTtl, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: k.kid, typ: 'JWT' })
        .sign(await importJWK(k.privateJwk, 'RS256'));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const provider = new Provider(url, {
    jwks: { keys: [key.privateJwk] },
    clients: [
      {
        client_id: CLIENT_ID,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://localhost', 'http://localhost/keyboard'],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'password'],
        response_types: ['code'],
      },
      {
        client_id: CONFIDENTIAL_CLIENT_ID,
        client_secret: CONFIDENTIAL_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    cookies: { keys: ['test-cookie-key'] },
    claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: false,
    features: {
      deviceFlow: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      // The robot's client credentials buy a JWT access token for itself (as a kubelogin client-credentials setup has the
      // API server accept); the people's tokens stay opaque.
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, client: { clientId: string }) => (client.clientId === CONFIDENTIAL_CLIENT_ID ? ROBOT_RESOURCE : undefined),
        getResourceServerInfo: () => ({ scope: 'openid', audience: CONFIDENTIAL_CLIENT_ID, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
        useGrantedResource: () => false,
      },
    },
    ttl: { IdToken: () => idp.idTokenTtl },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: false,
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, groups: ['developers'], email: `${sub}@example.com`, email_verified: true }),
    }),
  });
  provider.registerGrantType(
    'password',
    async (ctx) => {
      const { username = '', password = '' } = ctx.oidc.params;
      if (passwords.get(username) !== password && !Object.hasOwn(BROKEN, username) && username !== 'foreign-key') {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'wrong username or password' };
        return;
      }
      const claims = { sub: username, groups: ['developers'], ...(Object.hasOwn(BROKEN, username) ? BROKEN[username]!(url) : {}) };
      ctx.body = {
        access_token: randomUUID(),
        token_type: 'Bearer',
        expires_in: 3600,
        id_token: await idp.sign(claims, { foreignKey: username === 'foreign-key' }),
      };
    },
    ['username', 'password', 'scope'],
  );
  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    total++;
    void callback(req, res);
  });
  return idp;
}
