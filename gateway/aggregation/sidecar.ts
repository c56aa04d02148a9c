// Sidecar mode (`gatehouse serve --upstream=<url>`), after kube-rbac-proxy:
// Gatehouse stands in front of one HTTP(S) service. Every request is
// authenticated (client certificate from --client-ca-file, bearer token
// through the cluster's TokenReview) and authorized (the cluster's
// SubjectAccessReview) and only then proxied, with the caller's identity in
// X-Remote-User / -Uid / -Group / -Extra-* (whatever the client sent under
// those names, its Authorization and Impersonate-* headers are removed).
//
// Who decides: --authentication-token-webhook-config-file and
// --authorization-webhook-config-file (kubeconfigs naming the cluster's
// tokenreviews / subjectaccessreviews URLs), or, for either one left out,
// InClusterConfig — the pod's service-account token and CA in
// /var/run/secrets/kubernetes.io/serviceaccount (GATEHOUSE_SERVICEACCOUNT_DIR
// overrides it) and KUBERNETES_SERVICE_HOST/PORT. The sidecar's own identity
// needs `create` on tokenreviews and subjectaccessreviews (the
// system:auth-delegator ClusterRole).
//
// Attributes: by default non-resource ones (the path, the verb from the
// method: GET/HEAD get, POST create, PUT update, PATCH patch, DELETE delete);
// with --resource-attributes the file's fixed resource attributes instead.
// --allow-paths: other paths are 404 before anything else; --ignore-paths:
// matching paths skip authentication and authorization (identity headers are
// still stripped). Patterns are Go path.Match ones (`*` = within one segment).
// Anonymous requests are 401 (as kube-rbac-proxy), whatever --anonymous-auth.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { forward, forwardUpgrade } from './forward.js';
import { parse as parseYaml } from 'yaml';
import { KubeClient } from '../../lib/kubeconfig/index.js';
import type { ClientConfig } from '../../lib/kubeconfig/index.js';
import { StatusError, toStatusError } from '../../lib/api/status.js';
import { ensureDevPki } from '../../certs/devpki.js';
import type { ServeOptions } from '../config/flags.js';
import { X509Authenticator } from '../authn/x509.js';
import { BearerAuthenticator, type TokenAuthenticator } from '../authn/token.js';
import { buildWebhookAuthenticator, WebhookTokenAuthenticator } from '../authn/webhook.js';
import { CachedTokenAuthenticator } from '../authn/tokencache.js';
import { UnionAuthenticator } from '../authn/union.js';
import { identityHeaderNames } from '../authn/requestheader.js';
import type { Authenticator } from '../authn/types.js';
import { WebhookAuthorizer, webhookClient } from '../authz/webhook.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import { identityHeaders, stripForwarded, strippedHeaders } from './identity.js';
import type { UserInfo } from '../../lib/api/meta.js';
import { listenServing } from '../../lib/http/listen.js';

export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface SidecarHooks {
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** Environment read for InClusterConfig (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

export interface RunningSidecar {
  readonly server: Server;
  readonly url: string;
  readonly upstream: string;
  shutdown(signal: string): Promise<void>;
}

export interface ResourceAttributes {
  readonly namespace: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

/** kube-rbac-proxy's verb of a method. */
export function verbOf(method: string | undefined): string {
  switch (method) {
    case 'GET': case 'HEAD': return 'get';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return 'delete';
    default: return (method ?? '').toLowerCase();
  }
}

/** Go's path.Match for one pattern: `*` any run of non-`/`, `?` one non-`/`; everything else literal. */
export function pathPattern(p: string): RegExp {
  let re = '';
  for (const ch of p) re += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${re}$`);
}

/** Reads --resource-attributes: `resourceAttributes:` at the top or under `authorization:` (kube-rbac-proxy's config file). */
export async function loadResourceAttributes(file: string): Promise<ResourceAttributes> {
  const bad = (why: string) => new Error(`--resource-attributes "${file}": ${why}`);
  let doc: unknown;
  try { doc = parseYaml(await readFile(file, 'utf8')); } catch (err) {
    throw bad(err instanceof Error && 'code' in err && err.code === 'ENOENT' ? 'no such file' : `not YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  const obj = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined);
  const top = obj(doc);
  const ra = obj(top?.['resourceAttributes']) ?? obj(obj(top?.['authorization'])?.['resourceAttributes']);
  if (!ra) throw bad('no resourceAttributes (top level or under authorization)');
  const known = ['namespace', 'apiGroup', 'apiVersion', 'resource', 'subresource', 'name'];
  const unknown = Object.keys(ra).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw bad(`unknown field resourceAttributes.${unknown[0]} (known: ${known.join(', ')})`);
  const out: Record<string, string> = {};
  for (const k of known) {
    const v = ra[k] ?? '';
    if (typeof v !== 'string') throw bad(`resourceAttributes.${k} must be a string`);
    out[k] = v;
  }
  if (out['resource'] === '') throw bad('resourceAttributes.resource is required');
  return Object.freeze(out as unknown as ResourceAttributes);
}

/** InClusterConfig, as client-go's rest.InClusterConfig: the pod's service-account token (re-read) and CA, the service host and port. */
export async function inClusterConfig(path: string, env: NodeJS.ProcessEnv, what: string): Promise<ClientConfig> {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const dir = env['GATEHOUSE_SERVICEACCOUNT_DIR'] || IN_CLUSTER_DIR;
  if (!host || !port) {
    throw new Error(`--upstream: no ${what} and no in-cluster configuration (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)`);
  }
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  await readFile(tokenFile, 'utf8').catch(() => { throw new Error(`--upstream: no ${what} and the in-cluster token ${tokenFile} cannot be read`); });
  const caPem = await readFile(caFile, 'utf8').catch(() => { throw new Error(`--upstream: no ${what} and the in-cluster CA ${caFile} cannot be read`); });
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return Object.freeze({
    source: '', context: 'in-cluster',
    cluster: Object.freeze({ name: 'in-cluster', server: `https://${hostPart}:${port}${path}`, caPem, insecureSkipTlsVerify: false }),
    user: Object.freeze({ name: 'in-cluster', tokenFile }),
  });
}

function writeStatus(res: ServerResponse, err: StatusError): void {
  if (res.headersSent) { res.destroy(); return; }
  const body = JSON.stringify(err.status);
  res.writeHead(err.code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...err.headers });
  res.end(body);
}

function writeSocketStatus(socket: Socket, err: StatusError): void {
  const body = JSON.stringify(err.status);
  socket.end(`HTTP/1.1 ${err.code} ${err.status.reason ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** kube-rbac-proxy's 403 text, as a Status. */
function forbiddenFor(a: Attributes): StatusError {
  const what = a.isResourceRequest
    ? `resource=${a.resource}${a.apiGroup ? `.${a.apiGroup}` : ''}, subresource=${a.subresource}, namespace=${a.namespace}, name=${a.name}`
    : `path=${a.path}`;
  return new StatusError(403, 'Forbidden', `Forbidden (user=${a.user.username}, verb=${a.verb}, ${what})`);
}

export async function startSidecar(opts: ServeOptions, hooks: SidecarHooks): Promise<RunningSidecar> {
  const upstream = opts.upstream;
  if (!upstream) throw new Error('sidecar mode needs --upstream');
  const { log } = hooks;
  const env = hooks.env ?? process.env;
  const clock = hooks.clock ?? Date.now;
  const connectHost = opts.bindAddress === '0.0.0.0' || opts.bindAddress === '::' ? '127.0.0.1' : opts.bindAddress;

  let certFile = opts.tlsCertFile;
  let keyFile = opts.tlsPrivateKeyFile;
  if (!certFile || !keyFile) {
    const pki = await ensureDevPki(opts.dataDir, { host: connectHost, port: opts.securePort });
    certFile = pki.servingCert;
    keyFile = pki.servingKey;
  }
  const cert = await readFile(certFile, 'utf8');
  const key = await readFile(keyFile, 'utf8');
  try { new X509Certificate(cert); } catch { throw new Error(`--tls-cert-file "${certFile}": no PEM certificate found`); }
  try { createPrivateKey(key); } catch { throw new Error(`--tls-private-key-file "${keyFile}": no PEM private key found`); }
  const clientCas = await Promise.all(opts.clientCaFiles.map((f) => readFile(f, 'utf8')));
  const upstreamCa = opts.upstreamCaFile ? await readFile(opts.upstreamCaFile, 'utf8') : undefined;
  const resourceAttributes = opts.resourceAttributesFile ? await loadResourceAttributes(opts.resourceAttributesFile) : undefined;
  const allow = opts.allowPaths.map(pathPattern);
  const ignore = opts.ignorePaths.map(pathPattern);

  const closers: Array<() => void> = [];
  // Authentication: client certificates (--client-ca-file), bearer tokens through the cluster's TokenReview.
  let tokens: TokenAuthenticator;
  if (opts.authenticationTokenWebhookConfigFile) {
    const w = await buildWebhookAuthenticator({
      configFile: opts.authenticationTokenWebhookConfigFile, cacheTtlMs: opts.authenticationTokenWebhookCacheTtlMs,
      version: opts.authenticationTokenWebhookVersion, apiAudiences: opts.apiAudiences, log, clock,
    });
    tokens = w.authenticator;
    closers.push(w.close);
  } else {
    const client = new KubeClient(await inClusterConfig('/apis/authentication.k8s.io/v1/tokenreviews', env, '--authentication-token-webhook-config-file'), { timeoutMs: 10_000, log, clock });
    closers.push(() => client.close());
    const webhook = new WebhookTokenAuthenticator(client, { version: 'v1', implicitAudiences: opts.apiAudiences });
    tokens = opts.authenticationTokenWebhookCacheTtlMs > 0
      ? new CachedTokenAuthenticator(webhook, { successTtlMs: opts.authenticationTokenWebhookCacheTtlMs, failureTtlMs: Math.min(opts.authenticationTokenWebhookCacheTtlMs, 10_000), clock })
      : webhook;
    log(`sidecar: TokenReview through the in-cluster configuration (${client.config.cluster.server})`);
  }
  const authenticators: Authenticator[] = [];
  if (clientCas.length > 0) authenticators.push(new X509Authenticator({ caPems: clientCas, clock }));
  authenticators.push(new BearerAuthenticator(tokens, opts.apiAudiences));
  const authenticator = new UnionAuthenticator(authenticators, { anonymous: false, log });

  // Authorization: the cluster's SubjectAccessReview; a failed call denies.
  let sarClient: KubeClient;
  let sarVersion = opts.authorizationWebhookVersion;
  if (opts.authorizationWebhookConfigFile) {
    sarClient = await webhookClient(opts.authorizationWebhookConfigFile, '--authorization-webhook-config-file', { timeoutMs: 10_000, log, clock });
  } else {
    sarClient = new KubeClient(await inClusterConfig('/apis/authorization.k8s.io/v1/subjectaccessreviews', env, '--authorization-webhook-config-file'), { timeoutMs: 10_000, log, clock });
    sarVersion = 'v1';
    log(`sidecar: SubjectAccessReview through the in-cluster configuration (${sarClient.config.cluster.server})`);
  }
  closers.push(() => sarClient.close());
  const authorizer: Authorizer = new WebhookAuthorizer(sarClient, {
    name: 'webhook', version: sarVersion, authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtlMs,
    unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtlMs, failurePolicy: 'Deny', withSelectors: false, log, clock,
  });

  const stripped = strippedHeaders(identityHeaderNames(undefined));
  const isHttps = upstream.startsWith('https:');
  const agent = isHttps
    ? new HttpsAgent({ keepAlive: true, maxFreeSockets: 64, ...(upstreamCa ? { ca: upstreamCa } : {}), minVersion: 'TLSv1.2' })
    : new HttpAgent({ keepAlive: true, maxFreeSockets: 64 });
  const upstreamUrl = new URL(upstream);
  const target = {
    protocol: isHttps ? 'https:' as const : 'http:' as const,
    host: upstreamUrl.hostname.replace(/^\[|\]$/g, ''),
    port: upstreamUrl.port || (isHttps ? 443 : 80),
    agent,
    // An upstream URL with a path serves under it.
    ...(upstreamUrl.pathname !== '/' ? { pathPrefix: upstreamUrl.pathname } : {}),
  };

  const attributesOf = (req: IncomingMessage, user: UserInfo, path: string): Attributes => {
    const verb = verbOf(req.method);
    if (resourceAttributes) return { user, verb, isResourceRequest: true, path, ...resourceAttributes };
    return { user, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
  };

  /** The identity headers to send, or a StatusError; also answers allow/ignore paths. */
  const gate = async (req: IncomingMessage): Promise<Record<string, string | string[]> | 'not-found'> => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (allow.length > 0 && !allow.some((r) => r.test(path))) return 'not-found';
    if (ignore.some((r) => r.test(path))) {
      stripForwarded(req, stripped);
      return {};
    }
    const { user } = await authenticator.authenticate(req);
    const attrs = attributesOf(req, user, path);
    const d = await authorizer.authorize(attrs);
    if (d.kind !== 'allow') {
      log(`sidecar: denied ${attrs.verb} ${path} for ${user.username}${d.reason ? `: ${d.reason}` : ''}`);
      throw forbiddenFor(attrs);
    }
    stripForwarded(req, stripped);
    return identityHeaders(user) as Record<string, string | string[]>;
  };

  const NOT_FOUND = new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    gate(req).then((headers) => {
      if (headers === 'not-found') { writeStatus(res, NOT_FOUND); return; }
      forward(req, res, target, { headers }).catch((err: Error) => {
        log(`sidecar: proxy to ${upstream} failed: ${err.message}`);
        writeStatus(res, new StatusError(502, 'InternalError', `error trying to reach the upstream: ${err.message}`));
      });
    }, (err: unknown) => writeStatus(res, toStatusError(err)));
  };

  const server = createServer({
    cert, key, ...(clientCas.length > 0 ? { ca: clientCas, requestCert: true } : {}), rejectUnauthorized: false,
    keepAliveTimeout: 65_000, maxHeaderSize: (1 << 20) + 4096, minVersion: 'TLSv1.2',
  }, handler);
  // Upgrades (websockets) pass the same gate first; a refused one is answered and closed.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    gate(req).then((headers) => {
      if (headers === 'not-found') { writeSocketStatus(socket, NOT_FOUND); return; }
      forwardUpgrade(req, socket, head, {
        protocol: target.protocol,
        options: { host: target.host, port: target.port, ...(upstreamCa ? { ca: upstreamCa } : {}), minVersion: 'TLSv1.2' },
      }, { headers }).catch((err: Error) => {
        log(`sidecar: upgrade to ${upstream} failed: ${err.message}`);
        writeSocketStatus(socket, new StatusError(502, 'InternalError', `error trying to reach the upstream: ${err.message}`));
      });
    }, (err: unknown) => writeSocketStatus(socket, toStatusError(err)));
  });
  await listenServing(server, opts.securePort, opts.bindAddress);
  const port = (server.address() as AddressInfo).port;
  log(`sidecar: proxying authorized requests to ${upstream}${resourceAttributes ? ' (resource attributes from --resource-attributes)' : ' (non-resource attributes from the path)'}`);
  let closed = false;
  return {
    server, upstream, url: `https://${connectHost.includes(':') ? `[${connectHost}]` : connectHost}:${port}`,
    async shutdown(signal: string) {
      if (closed) return;
      closed = true;
      log(`sidecar: ${signal}: shutting down`);
      if (opts.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, opts.shutdownDelayMs));
      await new Promise<void>((r) => { server.close(() => r()); server.closeIdleConnections(); setTimeout(() => { server.closeAllConnections(); }, 5_000).unref(); });
      agent.destroy();
      for (const c of closers) c();
    },
  };
}
