// AuthenticationConfiguration `issuer.discoveryURL`: the
// discovery document is fetched from that URL as given — here a path on
// another server that has nothing to do with the issuer URL, as an
// in-cluster `https://dex.dex.svc:5556/dex/.well-known/openid-configuration`
// or a URL without the well-known suffix would be — and its `issuer` is
// compared with `issuer.url`. The provider is a real oidc-provider; the
// discovery server serves a copy of its real document.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateServingCert } from '../../certs/pki.js';
import { closeServer } from '../helpers/closeserver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startIdp, type TestIdp } from './oidc-idp.js';
import { whoAmI } from './tokenkit.js';
import { eventually } from '../helpers/eventually.js';

const DOC_PATH = '/config/tenants/acme/oidc.json';
const indent = (pem: string, n: number) =>
  pem
    .replace(/\r/g, '')
    .trim()
    .split('\n')
    .map((l) => `${' '.repeat(n)}${l}`)
    .join('\n');

function getJson(url: string, ca: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(err);
        }
      });
    })
      .on('error', reject)
      .end();
  });
}

/** An HTTPS server (a certificate from the IdP's CA) that serves `doc` at DOC_PATH only, and counts its hits. */
async function startDocServer(idp: TestIdp, doc: () => Record<string, unknown>): Promise<{ server: Server; url: string; hits: () => number }> {
  const cert = generateServingCert(idp.ca);
  let hits = 0;
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    if (req.url !== DOC_PATH) {
      res.writeHead(404).end();
      return;
    }
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}${DOC_PATH}`, hits: () => hits };
}

function config(idp: TestIdp, discoveryURL: string, url = idp.url): string {
  return `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${url}
    discoveryURL: ${discoveryURL}
    certificateAuthority: |
${indent(idp.ca.certPem, 6)}
    audiences: [gatehouse]
  claimMappings:
    username:
      claim: sub
      prefix: "oidc:"
`;
}

describe('an issuer whose discovery document lives at an unrelated discoveryURL', () => {
  let dir: string;
  let idp: TestIdp;
  let docs: Awaited<ReturnType<typeof startDocServer>>;
  let s: TestServer;
  let wellKnownBefore: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-discovery-'));
    idp = await startIdp(dir);
    const real = await getJson(`${idp.url}/.well-known/openid-configuration`, idp.ca.certPem);
    assert.equal(real['issuer'], idp.url);
    docs = await startDocServer(idp, () => real);
    wellKnownBefore = idp.hits.get('/.well-known/openid-configuration') ?? 0;
    const file = join(dir, 'authn.yaml');
    await writeFile(file, config(idp, docs.url));
    s = await startTestServer({ flags: [`--authentication-config=${file}`] });
  });
  after(async () => {
    await s?.close();
    await closeServer(docs?.server);
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("authenticates the issuer's tokens with the keys the document names", async () => {
    const token = await idp.sign({ sub: 'alice' });
    await eventually('the OIDC keys loaded', async () => (await whoAmI(s, token)).status === 201);
    const me = await whoAmI(s, token);
    assert.equal(me.username, 'oidc:alice');
    assert.ok(me.groups?.includes('system:authenticated'));
  });

  it("fetched the document from the discoveryURL, never from the issuer's well-known path", () => {
    assert.ok(docs.hits() >= 1);
    assert.equal(idp.hits.get('/.well-known/openid-configuration') ?? 0, wellKnownBefore);
    assert.ok((idp.hits.get('/jwks') ?? 0) >= 1, JSON.stringify([...idp.hits]));
  });

  it('still refuses tokens of another issuer and tokens for another audience', async () => {
    assert.equal((await whoAmI(s, await idp.sign({ sub: 'bob', iss: `${idp.url}/other` }))).status, 401);
    assert.equal((await whoAmI(s, await idp.sign({ sub: 'bob', aud: 'someone-else' }))).status, 401);
  });
});

describe('a discovery document whose issuer is not issuer.url', () => {
  let dir: string;
  let idp: TestIdp;
  let docs: Awaited<ReturnType<typeof startDocServer>>;
  let s: TestServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidc-discovery-'));
    idp = await startIdp(dir);
    const real = await getJson(`${idp.url}/.well-known/openid-configuration`, idp.ca.certPem);
    // The document names another issuer (its own URL): kube compares it with issuer.url, not with the discoveryURL.
    docs = await startDocServer(idp, () => ({ ...real, issuer: `${idp.url}/elsewhere` }));
    const file = join(dir, 'authn.yaml');
    await writeFile(file, config(idp, docs.url));
    s = await startTestServer({ flags: [`--authentication-config=${file}`] });
  });
  after(async () => {
    await s?.close();
    await closeServer(docs?.server);
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses every token of the issuer and logs the mismatch', async () => {
    const mismatch = (l: string) =>
      l.includes(`discovery of issuer "${idp.url}" at "${docs.url}" failed: discovered metadata issuer does not match the expected issuer`);
    await eventually('the mismatch logged', async () => s.logs.some(mismatch));
    const r = await whoAmI(s, await idp.sign({ sub: 'alice' }));
    assert.equal(r.status, 401);
  });
});
