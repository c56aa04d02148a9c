// Audit (audit.k8s.io/v1) through a started server: the policy's levels and
// rules, the stages, the log file read back line by line, rotation, the
// webhook in batch and blocking-strict modes against a real receiver that
// works, fails and is down, and start errors for bad files and flags.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { HttpsClient } from '../helpers/client.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { AuditPolicy } from '../../gateway/audit/policy.js';
import { encodeEnvelope, PROTOBUF_MEDIA_TYPE as PROTOBUF } from '../../lib/protobuf/codec.js';
import { startAuditReceiver, type AuditReceiver } from './receiver.js';
import { Encoder } from 'cbor-x';
import { completeLines } from '../helpers/auditlog.js';
import { eventually } from '../helpers/eventually.js';

type Ev = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  nonResourceURLs: ['/readyz', '/livez*', '/healthz*']
- level: Metadata
  resources: [{group: '', resources: ['secrets']}, {group: apps, resources: ['deployments/scale']}]
- level: RequestResponse
  resources: [{group: '', resources: ['configmaps']}]
  omitManagedFields: true
- level: Request
  verbs: [create, update, patch, delete]
- level: Metadata
`;

async function readEvents(file: string): Promise<Ev[]> {
  return (await completeLines(file)).map((l) => JSON.parse(l) as Ev);
}

async function tokenClient(s: TestServer, token: string): Promise<HttpsClient & { as: typeof asUser }> {
  const ca = await readFile(join(s.dataDir, 'pki', 'ca.crt'), 'utf8');
  const c = new HttpsClient(s.url, { ca }) as HttpsClient & { as: typeof asUser };
  c.as = asUser;
  void token;
  return c;
}
function asUser(this: HttpsClient, token: string, method: string, path: string) {
  return this.request(method, path, undefined, { authorization: `Bearer ${token}` });
}

describe('audit log', () => {
  let s: TestServer;
  let dir: string;
  let logFile: string;
  let other: HttpsClient & { as: typeof asUser };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-'));
    logFile = join(dir, 'audit.log');
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    await writeFile(join(dir, 'tokens.csv'), 'alice-token,alice,uid-alice,"dev"\n');
    s = await startTestServer({
      flags: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logFile}`, `--token-auth-file=${join(dir, 'tokens.csv')}`],
    });
    other = await tokenClient(s, 'alice-token');
  });
  after(async () => {
    other?.close();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const byId = async (id: string, stage = 'ResponseComplete') =>
    eventually(`${stage} of ${id}`, async () => (await readEvents(logFile)).find((e) => e['auditID'] === id && e['stage'] === stage));

  it('RequestResponse keeps both bodies (managedFields omitted), with the Audit-Id the client was sent', async () => {
    const sent = Date.now();
    const r = await s.admin.request(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'audited' }, data: { k: 'v' } },
      { 'accept-encoding': 'gzip' },
    );
    assert.equal(r.status, 201);
    const id = String(r.headers['audit-id']);
    const ev = await byId(id);
    assert.equal(ev['kind'], 'Event');
    assert.equal(ev['apiVersion'], 'audit.k8s.io/v1');
    assert.equal(ev['level'], 'RequestResponse');
    assert.equal(ev['verb'], 'create');
    assert.equal(ev['requestURI'], '/api/v1/namespaces/default/configmaps');
    assert.equal(ev['user']['username'], 'admin');
    assert.ok(ev['user']['groups'].includes('system:masters'));
    assert.deepEqual(ev['objectRef'], { resource: 'configmaps', namespace: 'default', name: 'audited', apiVersion: 'v1' });
    assert.deepEqual(ev['responseStatus'], { metadata: {}, code: 201 });
    assert.deepEqual(ev['requestObject']['data'], { k: 'v' });
    assert.equal(ev['responseObject']['metadata']['name'], 'audited');
    assert.equal(ev['responseObject']['metadata']['managedFields'], undefined, 'omitManagedFields');
    assert.ok(ev['sourceIPs'].includes('127.0.0.1'));
    assert.equal(ev['annotations']['authorization.k8s.io/decision'], 'allow');
    assert.equal(ev['annotations']['authentication.gatehouse.dev/authenticator'], 'x509');
    assert.match(ev['requestReceivedTimestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Received when the request came in (the chain's start), completed after that, both within the call.
    const ms = (t: string) => Date.parse(`${t.slice(0, 23)}Z`);
    assert.ok(ev['requestReceivedTimestamp'] <= ev['stageTimestamp'], `${ev['requestReceivedTimestamp']} ≤ ${ev['stageTimestamp']}`);
    assert.ok(ms(ev['requestReceivedTimestamp']) >= sent - 1 && ms(ev['stageTimestamp']) <= Date.now() + 1, 'within the call');
    // omitStages: RequestReceived is never written.
    assert.equal(
      (await readEvents(logFile)).some((e) => e['auditID'] === id && e['stage'] === 'RequestReceived'),
      false,
    );
  });

  it('RequestResponse keeps whole large answers while other answers reuse the buffers their chunks were written from', async () => {
    const ns = 'audit-large';
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const value = 'x'.repeat(2500);
    for (let i = 0; i < 240; i += 40) {
      await Promise.all(
        Array.from({ length: 40 }, (_, k) =>
          s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `big-${String(i + k).padStart(3, '0')}` },
            data: { v: `${i + k}${value}` },
          }),
        ),
      );
    }
    // ~650 KB each: streamed in pooled chunks (lib/http/parts.ts), three at once.
    const answers = await Promise.all([0, 1, 2].map(() => s.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps`)));
    for (const r of answers) {
      assert.equal(r.status, 200);
      assert.ok(r.body.length > 512 * 1024, `${r.body.length} bytes`);
      const ev = await byId(String(r.headers['audit-id']));
      assert.equal(ev['level'], 'RequestResponse');
      const items = ev['responseObject']['items'] as Ev[];
      assert.equal(items.length, 240);
      assert.deepEqual(
        items.map((o) => o['data']['v']),
        (r.json.items as Ev[]).map((o) => o['data']['v']),
      );
    }
  });

  it('a protobuf request and answer are written in their JSON form', async () => {
    const body = encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'audited-pb' }, data: { wire: 'protobuf' } });
    const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', body, { 'content-type': PROTOBUF, accept: PROTOBUF });
    assert.equal(r.status, 201);
    const ev = await byId(String(r.headers['audit-id']));
    assert.equal(ev['level'], 'RequestResponse');
    assert.deepEqual(ev['requestObject']['data'], { wire: 'protobuf' });
    assert.equal(ev['requestObject']['kind'], 'ConfigMap');
    assert.equal(ev['responseObject']['metadata']['name'], 'audited-pb');
    assert.deepEqual(ev['responseObject']['data'], { wire: 'protobuf' });
    assert.equal(ev['objectRef']['name'], 'audited-pb');
  });

  it("Metadata keeps no bodies, and an error answer's Status is in responseStatus", async () => {
    const r = await s.admin.request('GET', '/api/v1/namespaces/default/secrets/missing');
    assert.equal(r.status, 404);
    const ev = await byId(String(r.headers['audit-id']));
    assert.equal(ev['level'], 'Metadata');
    assert.equal(ev['responseStatus']['code'], 404);
    assert.equal(ev['responseStatus']['reason'], 'NotFound');
    assert.equal(ev['responseStatus']['status'], 'Failure');
    assert.match(ev['responseStatus']['message'], /secrets "missing" not found/);
    assert.equal(ev['requestObject'], undefined);
    assert.equal(ev['responseObject'], undefined);
    const c = await s.admin.request('POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hush' },
      stringData: { password: 'p4ss' },
    });
    assert.equal(c.status, 201);
    const ce = await byId(String(c.headers['audit-id']));
    assert.equal(ce['requestObject'], undefined, 'a Secret at Metadata is never written');
    assert.doesNotMatch(await readFile(logFile, 'utf8'), /p4ss/);
  });

  it("a Metadata event names the object the request carries (kube's LogRequestObject) and always has the authorization reason", async () => {
    const c = await s.admin.request('POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'named-at-metadata' },
    });
    assert.equal(c.status, 201, c.text);
    const ce = await byId(String(c.headers['audit-id']));
    assert.equal(ce['level'], 'Metadata');
    assert.deepEqual(ce['objectRef'], { resource: 'secrets', namespace: 'default', name: 'named-at-metadata', apiVersion: 'v1' });
    // system:masters: allowed with no reason, and kube still writes the annotation, empty.
    assert.equal(ce['annotations']['authorization.k8s.io/decision'], 'allow');
    assert.equal(ce['annotations']['authorization.k8s.io/reason'], '');
    const { uid, resourceVersion } = c.json.metadata as { uid: string; resourceVersion: string };
    const u = await s.admin.request('PUT', '/api/v1/namespaces/default/secrets/named-at-metadata', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'named-at-metadata', uid, resourceVersion },
      data: {},
    });
    assert.equal(u.status, 200, u.text);
    const ue = await byId(String(u.headers['audit-id']));
    assert.deepEqual(ue['objectRef'], { resource: 'secrets', namespace: 'default', name: 'named-at-metadata', uid, apiVersion: 'v1', resourceVersion });
    // A subresource's PUT: the Scale's resourceVersion.
    const d = await s.admin.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'scaled' },
      spec: {
        selector: { matchLabels: { app: 's' } },
        template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    assert.equal(d.status, 201, d.text);
    const scale = (await s.admin.request('GET', '/apis/apps/v1/namespaces/default/deployments/scaled/scale')).json;
    const sc = await s.admin.request('PUT', '/apis/apps/v1/namespaces/default/deployments/scaled/scale', { ...scale, spec: { replicas: 2 } });
    assert.equal(sc.status, 200, sc.text);
    const se = await byId(String(sc.headers['audit-id']));
    assert.equal(se['level'], 'Metadata');
    assert.equal(se['objectRef']['subresource'], 'scale');
    assert.equal(se['objectRef']['resourceVersion'], scale.metadata.resourceVersion);
  });

  it('Request keeps the request body only', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'audit-ns' } });
    assert.equal(r.status, 201);
    const ev = await byId(String(r.headers['audit-id']));
    assert.equal(ev['level'], 'Request');
    assert.equal(ev['requestObject']['metadata']['name'], 'audit-ns');
    assert.equal(ev['objectRef']['name'], 'audit-ns');
    assert.equal(ev['responseObject'], undefined);
  });

  it('a service-account token names its authenticator and the issuer that signed it', async () => {
    const sa = await s.admin.request('POST', '/api/v1/namespaces/default/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'audited-sa' },
    });
    assert.equal(sa.status, 201, sa.text);
    const tr = await s.admin.request('POST', '/api/v1/namespaces/default/serviceaccounts/audited-sa/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    assert.equal(tr.status, 201, tr.text);
    const token = String(tr.json.status.token);
    const iss = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).iss as string;
    // Twice: the second answer comes from the token cache, which must still name the issuer.
    for (let i = 0; i < 2; i++) {
      const r = await s.anonymous.request('GET', '/api/v1/namespaces/default/pods', undefined, { authorization: `Bearer ${token}` });
      const ev = await byId(String(r.headers['audit-id']));
      assert.equal(ev['user']['username'], 'system:serviceaccount:default:audited-sa');
      assert.equal(ev['annotations']['authentication.gatehouse.dev/authenticator'], 'service-account');
      assert.equal(ev['annotations']['authentication.gatehouse.dev/issuer'], iss);
    }
    // A credential without an issuer (a client certificate) gets no issuer annotation.
    const x = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal((await byId(String(x.headers['audit-id'])))['annotations']['authentication.gatehouse.dev/issuer'], undefined);
  });

  it('a denied request records the forbid decision; a failed credential is recorded with 401', async () => {
    const r = await other.as('alice-token', 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(r.status, 403);
    const ev = await byId(String(r.headers['audit-id']));
    assert.equal(ev['user']['username'], 'alice');
    assert.equal(ev['annotations']['authorization.k8s.io/decision'], 'forbid');
    assert.equal(ev['annotations']['authentication.gatehouse.dev/authenticator'], 'token-file');
    assert.equal(ev['responseStatus']['code'], 403);
    const bad = await other.as('not-a-token', 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(bad.status, 401);
    const be = await byId(String(bad.headers['audit-id']), 'ResponseStarted');
    assert.equal(be['responseStatus']['code'], 401);
    assert.equal(be['user']['username'], '');
    assert.ok(be['requestReceivedTimestamp'] <= be['stageTimestamp'], 'received when it came in, before authentication failed');
  });

  it("a client's Audit-ID is kept; impersonation is recorded; None paths are not written", async () => {
    const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps/audited', undefined, {
      'audit-id': 'client-chosen-id-1',
      'impersonate-user': 'bob',
    });
    assert.equal(r.headers['audit-id'], 'client-chosen-id-1');
    const ev = await byId('client-chosen-id-1');
    assert.equal(ev['user']['username'], 'admin');
    assert.equal(ev['impersonatedUser']['username'], 'bob');
    assert.equal(ev['responseStatus']['code'], 403);
    const h = await s.admin.request('GET', '/readyz');
    assert.equal(h.status, 200);
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(
      (await readEvents(logFile)).some((e) => e['auditID'] === h.headers['audit-id']),
      false,
    );
  });

  it('a watch records ResponseStarted, then ResponseComplete when it ends', async () => {
    const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
    assert.equal(r.status, 200);
    const id = String(r.headers['audit-id']);
    const started = await byId(id, 'ResponseStarted');
    const done = await byId(id, 'ResponseComplete');
    assert.equal(started['verb'], 'watch');
    assert.equal(done['responseStatus']['code'], 200);
    assert.equal(done['responseObject'], undefined);
  });
});

describe('audit log rotation', () => {
  it('rotates past --audit-log-maxsize and keeps --audit-log-maxbackup copies', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-rot-'));
    await writeFile(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: "", resources: [configmaps]}]\n',
    );
    const s = await startTestServer({
      flags: [
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-log-path=${join(dir, 'audit.log')}`,
        '--audit-log-maxsize=1',
        '--audit-log-maxbackup=2',
      ],
    });
    try {
      const big = 'x'.repeat(200_000);
      for (let i = 0; i < 10; i++) {
        const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `big-${i}` },
          data: { big },
        });
        assert.equal(r.status, 201);
        await new Promise((res) => setTimeout(res, 5));
      }
      const files = await eventually('two rotated copies', async () => {
        const f = (await readdir(dir)).filter((n) => n.startsWith('audit'));
        return f.length === 3 ? f : undefined;
      });
      const backups = files.filter((f) => f !== 'audit.log');
      assert.equal(backups.length, 2);
      for (const b of backups) assert.match(b, /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/);
      for (const f of files) {
        const size = (await readFile(join(dir, f))).length;
        assert.ok(size <= 1024 * 1024 + 600_000, `${f} is ${size} bytes`);
        for (const e of await readEvents(join(dir, f))) assert.equal(e['kind'], 'Event');
      }
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('audit webhook', () => {
  let dir: string;
  let recv: AuditReceiver;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-hook-'));
    await writeFile(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: ["/readyz"]\n- level: Metadata\n',
    );
    recv = await startAuditReceiver();
  });
  after(async () => {
    await recv.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('batch mode sends EventLists in batches; a failing or hanging receiver never stalls requests, and lost events are counted', async () => {
    const s = await startTestServer({
      flags: [
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
        '--audit-webhook-batch-max-size=5',
        '--audit-webhook-batch-max-wait=100ms',
        '--audit-webhook-initial-backoff=10ms',
      ],
    });
    try {
      recv.mode = 'ok';
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
        assert.equal(r.status, 200);
        ids.push(String(r.headers['audit-id']));
      }
      await eventually('every event at the receiver', () =>
        ids.every((id) => recv.events.some((e) => e['auditID'] === id && e['stage'] === 'ResponseComplete')) ? true : undefined,
      );
      assert.ok(recv.posts >= 2 && recv.posts < 24, `batched: ${recv.posts} posts for ${recv.events.length} events`);
      const errors = async () => {
        const m = (await s.admin.request('GET', '/metrics')).text;
        return Number(/^apiserver_audit_error_total\{plugin="webhook"\} (\d+)/m.exec(m)?.[1] ?? 0);
      };
      const before = await errors();
      recv.mode = 'fail';
      for (let i = 0; i < 3; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
      await eventually('the lost events counted', async () => ((await errors()) > before ? true : undefined));
      recv.mode = 'hang';
      const t = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      assert.equal(t.status, 200, 'a hanging receiver does not hold requests');
      assert.equal((await s.admin.request('GET', '/livez')).status, 200);
    } finally {
      recv.mode = 'ok';
      recv.release();
      await s.close();
    }
  });

  it('blocking-strict fails a request whose RequestReceived event cannot be delivered', async () => {
    const s = await startTestServer({
      flags: [
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-webhook-config-file=${await recv.kubeconfig(dir)}`,
        '--audit-webhook-mode=blocking-strict',
        '--audit-webhook-initial-backoff=5ms',
      ],
    });
    try {
      recv.mode = 'ok';
      const ok = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      assert.equal(ok.status, 200);
      assert.ok(
        recv.events.some((e) => e['auditID'] === ok.headers['audit-id'] && e['stage'] === 'RequestReceived'),
        'sent before the answer',
      );
      recv.mode = 'fail';
      const failed = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      assert.equal(failed.status, 500);
      assert.equal(failed.json.kind, 'Status');
      assert.match(failed.json.message, /audit/);
      recv.mode = 'ok';
      assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    } finally {
      recv.mode = 'ok';
      await s.close();
    }
  });
});

describe('audit configuration errors', () => {
  it('a policy that does not parse stops the start, naming the file and the field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-bad-'));
    try {
      const file = join(dir, 'policy.yaml');
      await writeFile(file, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n- level: Metadata\n  omitStages: [Sometimes]\n  colour: blue\n');
      await assert.rejects(startTestServer({ flags: [`--audit-policy-file=${file}`, `--audit-log-path=${join(dir, 'a.log')}`] }), (err: Error) => {
        assert.match(err.message, new RegExp(`--audit-policy-file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        assert.match(err.message, /rules\[0\]\.level: Unsupported value: "Loud"/);
        assert.match(err.message, /rules\[1\]\.omitStages\[0\]: Unsupported value: "Sometimes"/);
        assert.match(err.message, /rules\[1\]\.colour: Invalid value: unknown field/);
        return true;
      });
      await writeFile(file, '{"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [');
      await assert.rejects(startTestServer({ flags: [`--audit-policy-file=${file}`] }), /not valid YAML or JSON/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('flags: bad values and orphans are start errors naming the flag', () => {
    const err = (argv: string[]) => {
      const r = parseServeFlags(argv);
      return 'error' in r ? r.error : '';
    };
    assert.match(
      err(['--audit-log-mode=sometimes', '--audit-log-path=/tmp/x']),
      /invalid value "sometimes" for --audit-log-mode: must be one of batch, blocking, blocking-strict/,
    );
    assert.match(err(['--audit-log-maxsize=10']), /--audit-log-maxsize requires --audit-log-path/);
    assert.match(err(['--audit-webhook-mode=batch']), /--audit-webhook-mode requires --audit-webhook-config-file/);
    assert.match(err(['--audit-log-format=xml', '--audit-log-path=x']), /invalid value "xml" for --audit-log-format: must be one of json, legacy/);
    assert.equal(err(['--audit-log-format=legacy', '--audit-log-path=x']), '');
    assert.match(err(['--audit-log-path=-', '--audit-log-maxbackup=3']), /cannot be rotated/);
    assert.equal(err(['--audit-log-path=/tmp/a.log', '--audit-log-maxage=7', '--audit-policy-file=p.yaml']), '');
  });
});

describe('audit policy rules', () => {
  const policy = AuditPolicy.parse(
    `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  userGroups: [auditors]
  omitStages: [ResponseStarted]
- level: Request
  resources: [{group: "", resources: ["pods/log", "*/status"]}]
- level: Metadata
  resources: [{group: apps, resources: ["deployments/*"]}]
- level: Request
  resources: [{group: "", resources: [secrets], resourceNames: [special]}]
  namespaces: [kube-system]
- level: Metadata
  nonResourceURLs: ["/api*", "/version"]
- level: None
`,
    'test',
  );
  type Attrs = { user: string; groups: string[] } & Parameters<AuditPolicy['decide']>[2];
  const attrs = (o: Partial<Attrs>): Attrs => ({
    user: 'u',
    groups: [],
    verb: 'get',
    isResourceRequest: true,
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    namespace: 'default',
    name: 'x',
    path: '/',
    ...o,
  });
  const decide = (a: Attrs) => policy.decide(a.user, a.groups, a);
  const cases: Array<[string, Partial<Attrs>, string]> = [
    ['a user rule', { user: 'system:kube-proxy', groups: ['auditors'] }, 'None'],
    ['a group rule', { groups: ['auditors'] }, 'RequestResponse'],
    ['resource/subresource', { subresource: 'log' }, 'Request'],
    ['*/subresource', { resource: 'services', subresource: 'status' }, 'Request'],
    ['a bare resource is not its subresources', { resource: 'pods', subresource: '' }, 'None'],
    ['resource/* matches the subresources', { apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }, 'Metadata'],
    ['resource/* also matches the resource', { apiGroup: 'apps', resource: 'deployments' }, 'Metadata'],
    ['resourceNames and namespaces', { resource: 'secrets', namespace: 'kube-system', name: 'special' }, 'Request'],
    ['another name', { resource: 'secrets', namespace: 'kube-system', name: 'other' }, 'None'],
    ['another namespace', { resource: 'secrets', namespace: 'default', name: 'special' }, 'None'],
    ['a non-resource prefix', { isResourceRequest: false, path: '/apis/apps', resource: '' }, 'Metadata'],
    ['a non-resource exact path', { isResourceRequest: false, path: '/version', resource: '' }, 'Metadata'],
    ['a non-resource miss', { isResourceRequest: false, path: '/metrics', resource: '' }, 'None'],
  ];
  for (const [name, a, level] of cases) {
    it(name, () => assert.equal(decide(attrs(a)).level, level));
  }
  it('omitStages of the policy and of the rule add up', () => {
    const d = decide(attrs({ groups: ['auditors'] }));
    assert.deepEqual([...d.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  });
  it('a __proto__ key in a policy is an unknown field, not a prototype', () => {
    assert.throws(
      () => AuditPolicy.parse('{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata","__proto__":{"level":"None"}}]}', 't'),
      /rules\[0\]\.__proto__: Invalid value: unknown field/,
    );
  });
});

describe('audit of CBOR bodies (CBORServingAndStorage on)', () => {
  let s: TestServer;
  let dir: string;
  let logFile: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-audit-cbor-'));
    logFile = join(dir, 'audit.log');
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    s = await startTestServer({
      flags: ['--feature-gates=CBORServingAndStorage=true', `--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${logFile}`],
    });
  });
  after(async () => {
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a CBOR request and answer are written in their JSON form, and a CBOR error's Status is read back", async () => {
    // cbor-x with plain maps and arrays, self-described as kube's clients send it.
    const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, useTag259ForMaps: false } as ConstructorParameters<typeof Encoder>[0]);
    const body = Buffer.concat([
      Buffer.from([0xd9, 0xd9, 0xf7]),
      encoder.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'audited-cbor' }, data: { wire: 'cbor' } }),
    ]);
    const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', body, { 'content-type': 'application/cbor', accept: 'application/cbor' });
    assert.equal(r.status, 201);
    assert.match(String(r.headers['content-type']), /^application\/cbor/);
    const find = (id: string) =>
      eventually(`the event of ${id}`, async () => (await readEvents(logFile)).find((e) => e['auditID'] === id && e['stage'] === 'ResponseComplete'));
    const ev = await find(String(r.headers['audit-id']));
    assert.equal(ev['level'], 'RequestResponse');
    assert.deepEqual(ev['requestObject']['data'], { wire: 'cbor' });
    assert.equal(ev['requestObject']['kind'], 'ConfigMap');
    assert.equal(ev['responseObject']['metadata']['name'], 'audited-cbor');
    assert.deepEqual(ev['responseObject']['data'], { wire: 'cbor' });
    assert.equal(ev['objectRef']['name'], 'audited-cbor');
    // Metadata level (secrets): the error answer goes out in CBOR, its Status is in responseStatus.
    const missing = await s.admin.request('GET', '/api/v1/namespaces/default/secrets/none', undefined, { accept: 'application/cbor' });
    assert.equal(missing.status, 404);
    assert.match(String(missing.headers['content-type']), /^application\/cbor/);
    const err = await find(String(missing.headers['audit-id']));
    assert.equal(err['level'], 'Metadata');
    assert.equal(err['responseStatus']['reason'], 'NotFound');
    assert.match(err['responseStatus']['message'], /secrets "none" not found/);
    assert.equal(err['responseObject'], undefined);
  });
});
