// A real Prometheus (Debian's) scraping a started Gatehouse over mTLS with
// the shipped scrape job and rules: after a short workload (creates, lists, a
// watch, a request denied through the authorization webhook, token webhook
// and admission webhook calls, an aggregated backend that answers, then one
// that hangs past its deadline, then taken down) every recording rule and
// every dashboard panel's query returns series from Prometheus's HTTP API,
// and the APIService-down alert goes pending. The shipped RBAC lets its
// ServiceAccount's token read /metrics; without credentials nothing leaks.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import { generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { panelQueries } from '../../k8s/monitoring/source/dashboards.js';
import { recordingRules } from '../../k8s/monitoring/source/rules.js';
import { scrapeJob } from '../../k8s/monitoring/source/scrape.js';
import { RULES_FILE } from '../../k8s/monitoring/source/render.js';
import { root } from '../docs/readmes.js';
import { startTestServer, freePort, type TestServer } from '../helpers/server.js';
import { HttpsClient } from '../helpers/client.js';
import { eventually } from '../helpers/eventually.js';
import { sendJson, startHttpsPeer, tokenReviewAnswer, type HttpsPeer, type PeerRequest } from '../authn/fixtures.js';
import { startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import { missing } from './tools.js';

const skip = missing('prometheus');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;
const CM = '/api/v1/namespaces/default/configmaps';

/** The token webhook (`webhook-token` is jane) and the authorization webhook (no opinion on anything). */
function webhooks(r: PeerRequest, res: ServerResponse): void {
  if (r.url.startsWith('/authenticate')) {
    const review = r.json as { apiVersion: string; spec: { token: string } };
    const ok = review.spec.token === 'webhook-token';
    return sendJson(res, 200, tokenReviewAnswer(review, ok ? { authenticated: true, user: { username: 'jane', groups: ['dev'] } } : { authenticated: false }));
  }
  return sendJson(res, 200, { apiVersion: (r.json as { apiVersion: string }).apiVersion, kind: 'SubjectAccessReview', status: { allowed: false } });
}

interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

describe('a real Prometheus scraping Gatehouse with the shipped scrape job and rules', { skip, timeout: 240_000 }, () => {
  let dir: string;
  let s: TestServer;
  let peer: HttpsPeer;
  let hooks: WebhookServer;
  let echo: EchoBackend | undefined;
  let prom: ChildProcess | undefined;
  let promUrl: string;
  const promLog: string[] = [];

  const query = async (expr: string): Promise<PromResult[]> => {
    const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await r.json()) as { status: string; error?: string; data: { result: PromResult[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-prometheus-'));
    peer = await startHttpsPeer(webhooks);
    hooks = await startWebhookServer();
    const kubeconfig = async (name: string, path: string) => {
      const file = join(dir, name);
      await writeFile(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'w',
          clusters: [{ name: 'w', cluster: { server: `${peer.url}${path}`, 'certificate-authority-data': b64(peer.ca.certPem) } }],
          users: [{ name: 'w', user: {} }],
          contexts: [{ name: 'w', context: { cluster: 'w', user: 'w' } }],
        }),
      );
      return file;
    };
    s = await startTestServer({
      flags: [
        '--storage-backend',
        'file',
        `--authentication-token-webhook-config-file=${await kubeconfig('token.kubeconfig', '/authenticate')}`,
        '--authorization-mode=Node,RBAC,Webhook',
        `--authorization-webhook-config-file=${await kubeconfig('authz.kubeconfig', '/authorize')}`,
        '--controllers=*,-root-ca-cert-publisher',
      ],
    });

    // Prometheus's client certificate: a user in system:monitoring, which kube's bootstrap policy lets read /metrics.
    const pki = devPkiPaths(s.dataDir);
    const ca = { certPem: await readFile(pki.caCert, 'utf8'), keyPem: await readFile(pki.caKey, 'utf8') };
    const client = generateClientCert(ca, { user: 'prometheus', groups: ['system:monitoring'] });
    await writeFile(join(dir, 'prometheus.crt'), client.certPem);
    await writeFile(join(dir, 'prometheus.key'), client.keyPem, { mode: 0o600 });
    const job = scrapeJob({
      target: `127.0.0.1:${s.port}`,
      caFile: pki.caCert,
      certFile: join(dir, 'prometheus.crt'),
      keyFile: join(dir, 'prometheus.key'),
      interval: '1s',
    });
    await writeFile(
      join(dir, 'prometheus.yml'),
      stringify({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, rule_files: [join(root, RULES_FILE)], scrape_configs: [job] }),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prom = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prom.stdout!.on('data', (c: Buffer) => promLog.push(c.toString()));
    prom.stderr!.on('data', (c: Buffer) => promLog.push(c.toString()));
    await eventually('Prometheus ready', async () => (await fetch(`${promUrl}/-/ready`)).ok, { timeoutMs: 60_000 });
    await eventually('Gatehouse scraped', async () => (await query('up{job="gatehouse"}'))[0]?.value[1] === '1', { timeoutMs: 60_000 }).catch((err: Error) => {
      throw new Error(`${err.message}\nPrometheus said: ${promLog.join('')}`);
    });
  });

  after(async () => {
    if (prom && prom.exitCode === null) {
      prom.kill('SIGTERM');
      await new Promise((r) => prom!.once('exit', r));
    }
    await echo?.close();
    await s?.close();
    await peer?.close();
    await hooks?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a scrape without credentials is refused and shows no metric; the shipped RBAC lets its ServiceAccount read /metrics', async () => {
    const anon = await s.anonymous.request('GET', '/metrics');
    assert.equal(anon.status, 403);
    assert.doesNotMatch(anon.text, /apiserver_request_total/);
    const bad = await s.anonymous.request('GET', '/metrics', undefined, { authorization: 'Bearer not-a-token' });
    assert.equal(bad.status, 401);
    assert.doesNotMatch(bad.text, /apiserver_request_total/);
    // Asynchronously: the server answering kubectl runs in this process.
    await promisify(execFile)('kubectl', ['--kubeconfig', s.kubeconfig, 'apply', '-f', join(root, 'k8s/monitoring/rbac.yaml')]);
    const token = await eventually('the token controller fills the Secret', async () => {
      const secret = await s.admin.request('GET', '/api/v1/namespaces/monitoring/secrets/gatehouse-metrics-token');
      const t = secret.json?.data?.token as string | undefined;
      return t !== undefined && Buffer.from(t, 'base64').toString('utf8');
    });
    const c = new HttpsClient(s.url, { ca: await readFile(devPkiPaths(s.dataDir).caCert, 'utf8') });
    try {
      const ok = await c.request('GET', '/metrics', undefined, { authorization: `Bearer ${token}` });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /^apiserver_request_total\{/m);
      assert.equal((await c.request('GET', '/api/v1/namespaces', undefined, { authorization: `Bearer ${token}` })).status, 403, 'only /metrics');
    } finally {
      c.close();
    }
  });

  it('after a workload, every recording rule and every panel query returns series; the APIService-down alert goes pending', async () => {
    // An admission webhook on configmaps, in force once it is called.
    const hook = await s.admin.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'allow-configmaps' },
      webhooks: [
        {
          name: 'allow.hooks.example.com',
          clientConfig: { url: hooks.url('/allow'), caBundle: hooks.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(hook.status, 201, hook.text);
    const watch = await s.admin.watch(`${CM}?watch=1`);
    let n = 0;
    await eventually('the admission webhook in force', async () => {
      assert.equal((await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${++n}` } })).status, 201);
      return hooks.received('/allow').length > 0;
    });
    try {
      for (let i = 0; i < 20; i++) {
        assert.equal((await s.admin.request('GET', CM)).status, 200);
        assert.equal((await s.admin.request('GET', `${CM}/cm-1`)).status, 200);
      }
      // Denied: jane (the token webhook's) has no RBAC grant, and the authorization webhook has no opinion.
      const webhookClient = new HttpsClient(s.url, { ca: await readFile(devPkiPaths(s.dataDir).caCert, 'utf8') });
      try {
        for (let i = 0; i < 3; i++) {
          const denied = await webhookClient.request('GET', '/api/v1/namespaces/default/secrets', undefined, { authorization: 'Bearer webhook-token' });
          assert.equal(denied.status, 403, denied.text);
        }
      } finally {
        webhookClient.close();
      }

      // An aggregated backend: answers, then hangs past a request's deadline (the server ends it: 504), then goes.
      const pem = servingPki(dir, 'echo');
      echo = await startEcho(pem, await readFile(devPkiPaths(s.dataDir).frontProxyCaCert, 'utf8'));
      const apiservice = await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
      await waitAvailable(s.admin, apiservice, 'True');
      for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', `${ECHOES}/e${i}`)).status, 200);
      assert.equal((await s.admin.request('GET', `${ECHOES}/hang?timeout=1s`)).status, 504);
      // Scraped while the backend still answers, then taken down.
      await eventually('the aggregated requests scraped', async () => (await query('apiserver_request_total{group="echo.gatehouse.dev"}')).length > 0);
      await echo.close();
      echo = undefined;
      await waitAvailable(s.admin, apiservice, 'False');

      const pending = await eventually(
        'GatehouseAPIServiceUnavailable pending',
        async () => {
          const r = await fetch(`${promUrl}/api/v1/alerts`);
          const body = (await r.json()) as { data: { alerts: Array<{ labels: Record<string, string>; state: string }> } };
          return body.data.alerts.find((a) => a.labels['alertname'] === 'GatehouseAPIServiceUnavailable' && a.labels['name'] === apiservice);
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(pending.state, 'pending', 'its `for` is 5 minutes');
      assert.equal(pending.labels['severity'], 'warning');

      const empty: string[] = [];
      for (const r of recordingRules) {
        const got = await eventually(`${r.record} evaluated`, async () => (await query(r.record)).length > 0 || undefined, { timeoutMs: 30_000 }).catch(
          () => false,
        );
        if (!got) empty.push(r.record);
      }
      for (const p of panelQueries()) {
        const got = await eventually(`${p.where}`, async () => (await query(p.expr)).length > 0 || undefined, { timeoutMs: 15_000 }).catch(() => false);
        if (!got) empty.push(`${p.where}: ${p.expr}`);
      }
      assert.deepEqual(empty, [], 'every recording rule and panel returns series');
    } finally {
      watch.stop();
    }
  });
});
