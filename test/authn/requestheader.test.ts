import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateCa, generateClientCert, generateFrontProxyCa, generateFrontProxyClientCert, type CertKeyPair } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { identityHeaderNames } from '../../gateway/authn/requestheader.js';
import { stripIdentityHeaders } from '../../gateway/pipeline/identityheaders.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { HttpsClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const BODY = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const frontProxyCa = generateFrontProxyCa();
const proxyCert = generateFrontProxyClientCert(frontProxyCa);
const otherProxy = generateClientCert(frontProxyCa, { user: 'other-proxy' });
const strangerProxy = generateClientCert(generateCa('stranger'), { user: 'front-proxy-client' });

const IDENTITY = {
  'x-remote-user': 'jane',
  'x-remote-group': ['dev', 'ops'],
  'x-remote-extra-acme.com%2fproject': 'gatehouse',
  'X-Remote-Extra-Scopes': ['read', 'write'],
};

let dir = '';
let s: TestServer;
let devCa = '';
const clients: HttpsClient[] = [];
function client(pair?: CertKeyPair): HttpsClient {
  const c = new HttpsClient(s.url, { ca: devCa, ...(pair ? { cert: pair.certPem, key: pair.keyPem } : {}) });
  clients.push(c);
  return c;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-requestheader-'));
  const caFile = join(dir, 'front-proxy-ca.crt');
  await writeFile(caFile, frontProxyCa.certPem);
  s = await startTestServer({
    flags: [
      '--authorization-mode=AlwaysAllow',
      `--requestheader-client-ca-file=${caFile}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ],
  });
  devCa = await readFile(devPkiPaths(s.dataDir).caCert, 'utf8');
});
after(async () => {
  for (const c of clients) c.close();
  await s?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('authenticating proxy', () => {
  it('trusts the identity headers of a proxy with a front-proxy certificate', async () => {
    const r = await client(proxyCert).request('POST', PATH, BODY, IDENTITY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, {
      username: 'jane',
      groups: ['dev', 'ops', 'system:authenticated'],
      extra: { 'acme.com/project': ['gatehouse'], scopes: ['read', 'write'] },
    });
  });

  it('ignores and strips the headers of a client without a certificate: it is anonymous', async () => {
    const r = await client().request('POST', PATH, BODY, IDENTITY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('ignores the headers of a client whose certificate is a normal client certificate', async () => {
    const r = await s.admin.request('POST', PATH, BODY, IDENTITY);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.userInfo.username, 'admin');
  });

  it('refuses a proxy certificate whose common name is not allowed', async () => {
    const r = await client(otherProxy).request('POST', PATH, BODY, IDENTITY);
    assert.equal(r.status, 401);
    assert.equal(r.json.message, 'Unauthorized');
    assert.ok(
      s.logs.some((l) => l.includes('"other-proxy" is not in --requestheader-allowed-names')),
      s.logs.join('\n'),
    );
  });

  it('refuses a proxy certificate from another CA', async () => {
    const r = await client(strangerProxy).request('POST', PATH, BODY, IDENTITY);
    assert.equal(r.status, 401);
  });

  it('does not let the front-proxy certificate log in by itself', async () => {
    const r = await client(proxyCert).request('POST', PATH, BODY);
    assert.equal(r.status, 401);
  });

  it('needs --requestheader-username-headers with --requestheader-client-ca-file', () => {
    assert.deepEqual(parseServeFlags(['--requestheader-client-ca-file=ca.crt']), {
      error: '--requestheader-client-ca-file requires --requestheader-username-headers',
    });
  });
});

describe('identity header stripping', () => {
  let server: Server;
  let port = 0;
  const strip = identityHeaderNames({
    usernameHeaders: ['X-Proxy-User'],
    uidHeaders: [],
    groupHeaders: ['X-Proxy-Groups'],
    extraHeaderPrefixes: ['X-Proxy-Extra-'],
    allowedNames: [],
  });
  before(async () => {
    server = createServer((req, res) => {
      void req.headersDistinct; // computed before stripping, as an authenticator would
      stripIdentityHeaders(req, strip);
      res.end(JSON.stringify({ headers: req.headers, raw: req.rawHeaders, distinct: req.headersDistinct }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('removes configured names and prefixes and the X-Remote defaults from every view of the headers', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'GET',
          path: '/',
          headers: {
            'X-Proxy-User': 'a',
            'X-Proxy-Groups': 'g',
            'X-Proxy-Extra-Foo': 'b',
            'X-Remote-User': 'c',
            'X-Remote-Group': 'd',
            'X-Remote-Uid': 'e',
            'X-Remote-Extra-Bar': 'f',
            'X-Other': 'kept',
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const seen = JSON.parse(body) as { headers: Record<string, string>; raw: string[]; distinct: Record<string, string[]> };
    for (const view of [Object.keys(seen.headers), seen.raw.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()), Object.keys(seen.distinct)]) {
      assert.ok(view.includes('x-other'), JSON.stringify(view));
      assert.deepEqual(
        view.filter((h) => h.startsWith('x-proxy') || h.startsWith('x-remote')),
        [],
      );
    }
  });
});
