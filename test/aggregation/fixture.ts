// Fixtures of the aggregation tests: certificates made with the project's PKI
// code, the sample backend as a real `gatehouse sample-backend` process, an
// in-test HTTPS echo backend (real TLS, requires the front-proxy client
// certificate) that answers with the headers it received, the objects
// that register a backend (Service, EndpointSlice, APIService), and a
// gateway in front of a `gatehouse core-backend` process.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';
import { ensureDevPki, type DevPkiPaths } from '../../certs/devpki.js';
import { GATEHOUSE_BIN, freePort, spawnTracked, startGatehouse, tempDir, type Proc, type Gatehouse, sleep } from '../e2e/helpers.js';
import type { HttpsClient } from '../helpers/client.js';

export const NS = 'gatehouse-samples';

export interface Pem {
  cert: string;
  key: string;
  ca: string;
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** A CA and a serving certificate for `<name>.<ns>.svc` (and loopback), written under dir. */
export function servingPki(dir: string, name: string): Pem {
  const ca: CertKeyPair = generateCa(`${name}-ca`);
  const leaf = generateServingCert(ca, { commonName: `${name}.${NS}.svc`, hosts: [`${name}.${NS}.svc`] });
  const files = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`), caFile: join(dir, `${name}-ca.crt`) };
  writeFileSync(files.certFile, leaf.certPem);
  writeFileSync(files.keyFile, leaf.keyPem, { mode: 0o600 });
  writeFileSync(files.caFile, ca.certPem);
  return { cert: leaf.certPem, key: leaf.keyPem, ca: ca.certPem, ...files };
}

export interface SampleBackend {
  proc: Proc;
  port: number;
  stop(): Promise<void>;
}

export async function startSampleBackend(o: { port?: number; dataDir: string; pem: Pem; frontProxyCaFile: string; extra?: string[] }): Promise<SampleBackend> {
  const port = o.port ?? (await freePort());
  const proc = spawnTracked(process.execPath, [
    GATEHOUSE_BIN,
    'sample-backend',
    `--secure-port=${port}`,
    `--data-dir=${o.dataDir}`,
    `--tls-cert-file=${o.pem.certFile}`,
    `--tls-private-key-file=${o.pem.keyFile}`,
    `--requestheader-client-ca-file=${o.frontProxyCaFile}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ...(o.extra ?? []),
  ]);
  proc.child.stdin?.end();
  await proc.waitFor('the sample backend serving', (p) => p.stdout.includes('is serving on') || !p.running, 60_000);
  if (!proc.running) throw new Error(`sample backend exited\n${proc.stderr}`);
  return {
    proc,
    port,
    async stop() {
      proc.kill('SIGTERM');
      await proc.waitExit();
    },
  };
}

export interface EchoBackend {
  server: Server;
  port: number;
  /** The last request's headers and client-certificate CN, by path. */
  seen: Map<string, { headers: Record<string, string | string[] | undefined>; peer: string }>;
  /** Paths of requests that were never answered (…/hang) and that the caller then cut. */
  cut: string[];
  /** Upgrade paths whose backend socket has closed. */
  upgradeClosed: Set<string>;
  close(): Promise<void>;
}

/**
 * An HTTPS backend that needs the front-proxy client certificate and echoes
 * what it received; it never answers a path ending in /hang, and answers one
 * ending in /stream with headers only, keeping it open; a path with
 * `redirect` answers 302 to another host (and `redirect304` a 304); upgrades
 * echo bytes, or are refused under /refuse (closing) and /deny (keeping the
 * connection open), or redirected.
 */
export async function startEcho(pem: Pem, frontProxyCa: string): Promise<EchoBackend> {
  const seen: EchoBackend['seen'] = new Map();
  const cut: string[] = [];
  const upgradeClosed = new Set<string>();
  const server = createServer({ cert: pem.cert, key: pem.key, ca: frontProxyCa, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '';
    const path = (req.url ?? '/').split('?')[0]!;
    seen.set(path, { headers: { ...req.headers }, peer: String(peer) });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (path.endsWith('/hang')) {
        res.on('close', () => cut.push(path));
        return;
      }
      if (path.endsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        return;
      }
      if (path === '/apis/echo.gatehouse.dev/v1') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            kind: 'APIResourceList',
            apiVersion: 'v1',
            groupVersion: 'echo.gatehouse.dev/v1',
            resources: [{ name: 'echoes', singularName: 'echo', namespaced: true, kind: 'Echo', verbs: ['get', 'list', 'create'] }],
          }),
        );
        return;
      }
      if (path === '/apis') {
        res.writeHead(404).end();
        return;
      }
      if (path.endsWith('/redirect304')) {
        res.writeHead(304, { etag: '"e"' }).end();
        return;
      }
      if (path.endsWith('/redirect')) {
        res.writeHead(302, { location: 'https://attacker.example/steal', 'content-type': 'text/plain' }).end('moved');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Echo', headers: req.headers, peer, body: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  server.on('upgrade', (req, socket) => {
    const path = (req.url ?? '/').split('?')[0]!;
    seen.set(path, { headers: { ...req.headers }, peer: '' });
    socket.on('close', () => upgradeClosed.add(path));
    socket.on('error', () => undefined);
    if (path.endsWith('/redirect')) {
      socket.write('HTTP/1.1 302 Found\r\nLocation: https://attacker.example/\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (path.endsWith('/deny')) {
      socket.write('HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nno');
      return;
    }
    if (path.includes('refuse')) {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nnope');
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    seen,
    cut,
    upgradeClosed,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function apply(c: HttpsClient, path: string, obj: { metadata: { name: string } }): Promise<void> {
  const r = await c.request('POST', path, obj);
  if (r.status === 409) {
    const cur = await c.request('GET', `${path}/${obj.metadata.name}`);
    const u = await c.request('PUT', `${path}/${obj.metadata.name}`, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: cur.json.metadata.resourceVersion },
    });
    if (u.status !== 200) throw new Error(`PUT ${path}: ${u.status} ${u.text}`);
    return;
  }
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
}

/** Service + EndpointSlice for a backend on 127.0.0.1:port, and its APIService. */
export async function register(
  c: HttpsClient,
  o: { service: string; port: number; group: string; version?: string; caPem: string; gpm?: number; vp?: number },
): Promise<string> {
  const version = o.version ?? 'v1';
  await c.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await apply(c, `/api/v1/namespaces/${NS}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: o.service, namespace: NS },
    spec: { ports: [{ name: 'https', port: 443, targetPort: o.port, protocol: 'TCP' }] },
  } as { metadata: { name: string } });
  await apply(c, `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${o.service}-1`, namespace: NS, labels: { 'kubernetes.io/service-name': o.service } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: o.port, protocol: 'TCP' }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  } as { metadata: { name: string } });
  const name = `${version}.${o.group}`;
  await apply(c, '/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name },
    spec: {
      group: o.group,
      version,
      service: { namespace: NS, name: o.service, port: 443 },
      caBundle: Buffer.from(o.caPem).toString('base64'),
      groupPriorityMinimum: o.gpm ?? 1000,
      versionPriority: o.vp ?? 15,
    },
  } as { metadata: { name: string } });
  return name;
}

export async function availableCondition(c: HttpsClient, name: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const r = await c.request('GET', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
  return (r.json?.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Available');
}

/** Polls the APIService until its Available condition has `status` (and `reason` when given). */
export async function waitAvailable(
  c: HttpsClient,
  name: string,
  status: 'True' | 'False',
  reason?: string,
  timeoutMs = 30_000,
): Promise<{ status: string; reason: string; message: string }> {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await availableCondition(c, name);
    if (last?.status === status && (!reason || last.reason === reason)) return last;
    if (Date.now() > deadline)
      throw new Error(`APIService ${name} never became Available=${status}${reason ? ` (${reason})` : ''}; last: ${JSON.stringify(last)}`);
    await sleep(100);
  }
}

export type { Gatehouse };

export interface CorePairOptions {
  /** The backend authorizes through the gateway's SubjectAccessReview (--authorization-mode=Webhook). */
  delegated: boolean;
  /** More core-backend flags; they may name the gateway's dev PKI files. */
  coreFlags?: (pki: DevPkiPaths) => string[];
  gatewayFlags?: string[];
}

/**
 * A gateway (`gatehouse serve --core-backend-url`) in front of a `gatehouse
 * core-backend` process on the memory store, which trusts the gateway's
 * front-proxy client certificate. Stopped by stopAll.
 */
export async function startCorePair(o: CorePairOptions): Promise<{ gh: Gatehouse; pki: DevPkiPaths }> {
  const ghDir = tempDir('pair-gw');
  const ghPort = await freePort();
  const pki = await ensureDevPki(ghDir, { host: '127.0.0.1', port: ghPort });
  const dir = tempDir('pair-certs');
  const pem = servingPki(dir, 'core-api');
  const sarKubeconfig = join(dir, 'sar.kubeconfig');
  writeFileSync(sarKubeconfig, readFileSync(pki.kubeconfig, 'utf8').replace(/server: (\S+)/, 'server: $1/apis/authorization.k8s.io/v1/subjectaccessreviews'));
  const corePort = await freePort();
  const core = spawnTracked(process.execPath, [
    GATEHOUSE_BIN,
    'core-backend',
    `--secure-port=${corePort}`,
    `--data-dir=${tempDir('pair-core-data')}`,
    '--storage-backend=memory',
    `--tls-cert-file=${pem.certFile}`,
    `--tls-private-key-file=${pem.keyFile}`,
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-uid-headers=X-Remote-Uid',
    ...(o.delegated ? ['--authorization-mode=Webhook', `--authorization-webhook-config-file=${sarKubeconfig}`, '--authorization-webhook-version=v1'] : []),
    ...(o.coreFlags?.(pki) ?? []),
  ]);
  core.child.stdin?.end();
  await core.waitFor('core-backend serving', (p) => p.stdout.includes('is serving on') || !p.running, 60_000);
  if (!core.running) throw new Error(`core-backend exited before serving\nstderr: ${core.stderr}`);
  const gh = await startGatehouse({
    dataDir: ghDir,
    port: ghPort,
    flags: [`--core-backend-url=https://127.0.0.1:${corePort}`, `--core-backend-ca-file=${pem.caFile}`, ...(o.gatewayFlags ?? [])],
  });
  return { gh, pki };
}
