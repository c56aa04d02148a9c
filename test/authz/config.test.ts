// --authorization-config: field-by-field validation with one-line errors,
// start errors, and reloading (a good file changes decisions, a bad one keeps them).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAuthorizationConfig } from '../../gateway/authz/config.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from './kit.js';
import { startWebhookPeer } from './webhookpeer.js';

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n';
const WEBHOOK = (extra: string) => `${HEAD}authorizers:
- type: Webhook
  name: first
  webhook:
    timeout: 3s
    failurePolicy: NoOpinion
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: /etc/webhook.kubeconfig
${extra}`;

describe('parsing an authorization configuration', () => {
  it("accepts kube's example with defaults filled in", () => {
    const r = parseAuthorizationConfig(
      `${WEBHOOK('    matchConditions:\n    - expression: has(request.resourceAttributes)\n')}- type: Node\n  name: node\n- type: RBAC\n  name: rbac\n`,
      'f',
    );
    assert.ok('config' in r, 'error' in r ? r.error : '');
    const w = r.config.authorizers[0]!.webhook!;
    assert.equal(w.authorizedTtlMs, 300_000);
    assert.equal(w.unauthorizedTtlMs, 30_000);
    assert.equal(w.timeoutMs, 3000);
    assert.equal(w.matchConditions.length, 1);
    assert.deepEqual(
      r.config.authorizers.map((a) => a.type),
      ['Webhook', 'Node', 'RBAC'],
    );
  });

  const bad: Array<[string, string, string]> = [
    ['an empty authorizer list', `${HEAD}authorizers: []\n`, 'authorizers: Required value: at least one authorization mode must be defined'],
    [
      'a timeout over 30s',
      WEBHOOK('').replace('timeout: 3s', 'timeout: 45s'),
      'authorizers[0].webhook.timeout: Invalid value: "45s": must be no more than 30s',
    ],
    ['a missing timeout', WEBHOOK('').replace('    timeout: 3s\n', ''), 'authorizers[0].webhook.timeout: Required value'],
    ['duplicate names', `${HEAD}authorizers:\n- {type: Node, name: a}\n- {type: RBAC, name: a}\n`, 'authorizers[1].name: Duplicate value: "a"'],
    [
      'a name that is not a label',
      `${HEAD}authorizers:\n- {type: Node, name: My_Node}\n`,
      'authorizers[0].name: Invalid value: "My_Node": a lowercase RFC 1123 label',
    ],
    ['a missing name', `${HEAD}authorizers:\n- {type: Node}\n`, 'authorizers[0].name: Required value'],
    [
      'an unknown type',
      `${HEAD}authorizers:\n- {type: Magic, name: m}\n`,
      'authorizers[0].type: Unsupported value: "Magic": supported values: "Webhook", "Node", "RBAC", "ABAC", "AlwaysAllow", "AlwaysDeny"',
    ],
    ['a repeated non-webhook type', `${HEAD}authorizers:\n- {type: RBAC, name: a}\n- {type: RBAC, name: b}\n`, 'authorizers[1].type: Duplicate value: "RBAC"'],
    [
      'a webhook without its settings',
      `${HEAD}authorizers:\n- {type: Webhook, name: w}\n`,
      'authorizers[0].webhook: Required value: required when type=Webhook',
    ],
    [
      'webhook settings on another type',
      `${HEAD}authorizers:\n- {type: Node, name: n, webhook: {}}\n`,
      'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook',
    ],
    ['an unknown field', `${HEAD}authorizers:\n- {type: Node, name: n, webhok: {}}\n`, 'authorizers[0].webhok: unknown field'],
    [
      'a wrong failure policy',
      WEBHOOK('').replace('NoOpinion', 'Allow'),
      'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"',
    ],
    [
      'a wrong review version',
      WEBHOOK('').replace('subjectAccessReviewVersion: v1', 'subjectAccessReviewVersion: v2'),
      'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2"',
    ],
    [
      'a relative kubeconfig path',
      WEBHOOK('').replace('/etc/webhook.kubeconfig', 'webhook.kubeconfig'),
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "webhook.kubeconfig": must be an absolute path',
    ],
    [
      'a kubeconfig path under InClusterConfig',
      WEBHOOK('').replace('type: KubeConfigFile', 'type: InClusterConfig'),
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "/etc/webhook.kubeconfig": can only be set when type=KubeConfigFile',
    ],
    [
      'a match condition that does not compile',
      WEBHOOK('    matchConditions:\n    - expression: "request.user =="\n'),
      'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user ==": compilation failed',
    ],
    [
      'a match condition on an undeclared variable',
      WEBHOOK('    matchConditions:\n    - expression: "object.x"\n'),
      'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "object.x": compilation failed',
    ],
    [
      'more than 64 match conditions',
      WEBHOOK(`    matchConditions:\n${Array.from({ length: 65 }, (_, i) => `    - expression: "request.user != 'u${i}'"\n`).join('')}`),
      'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items',
    ],
    ['a duration of the wrong type', WEBHOOK('    authorizedTTL: 5\n'), 'authorizers[0].webhook.authorizedTTL: Invalid value: 5: must be a string'],
    [
      'a wrong kind',
      'apiVersion: apiserver.config.k8s.io/v1\nkind: Policy\nauthorizers: [{type: Node, name: n}]\n',
      'kind: Unsupported value: "Policy": supported values: "AuthorizationConfiguration"',
    ],
  ];
  for (const [name, text, message] of bad) {
    it(`reports ${name} on one line naming the field`, () => {
      const r = parseAuthorizationConfig(text, '/cfg.yaml');
      assert.ok('error' in r, 'expected an error');
      assert.ok(r.error.startsWith('invalid authorization configuration "/cfg.yaml": '), r.error);
      assert.ok(r.error.includes(message), `${r.error}\n  does not include\n${message}`);
      assert.doesNotMatch(r.error, /\n/);
    });
  }
});

describe('starting with an authorization configuration', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-authz-config-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [form, edit, words] of [
    ['a query string', (u: string) => `${u}?x=1`, 'query parameters are not permitted in the URL'],
    ['a fragment', (u: string) => `${u}#part`, 'fragments are not permitted in the URL'],
    ['user info', (u: string) => u.replace('https://', 'https://user:secret@'), 'user information is not permitted in the URL'],
  ] as const) {
    it(`refuses a webhook URL with ${form}, naming the file and field (kube's webhook URL rules)`, async () => {
      const peer = await startWebhookPeer();
      try {
        const kc = await peer.kubeconfig(dir, form.replace(/ /g, '-'));
        const cfg = JSON.parse(await readFile(kc, 'utf8'));
        cfg.clusters[0].cluster.server = edit(cfg.clusters[0].cluster.server);
        await writeFile(kc, JSON.stringify(cfg));
        const file = join(dir, `${form.replace(/ /g, '-')}.yaml`);
        await writeFile(file, WEBHOOK('').replace('/etc/webhook.kubeconfig', kc));
        await assert.rejects(startTestServer({ flags: [`--authorization-config=${file}`] }), (err: Error) => {
          assert.ok(
            err.message.includes(`authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "${kc}": cluster "webhook": server: ${words}`),
            err.message,
          );
          return true;
        });
      } finally {
        await peer.close();
      }
    });
  }

  it('refuses a file that does not validate', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, `${HEAD}authorizers: []\n`);
    await assert.rejects(startTestServer({ flags: [`--authorization-config=${file}`] }), /authorizers: Required value/);
  });
});

describe('reloading the authorization configuration', () => {
  let dir: string;
  let file: string;
  let srv: TestServer;
  const write = async (text: string) => {
    // Replace the file in one step, as editors and config management do.
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
  };
  const only = (type: string) => `${HEAD}authorizers:\n- {type: ${type}, name: ${type.toLowerCase()}}\n`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-authz-reload-'));
    file = join(dir, 'authz.yaml');
    await writeFile(file, only('AlwaysDeny'));
    srv = await startTestServer({ flags: [`--authorization-config=${file}`] });
  });
  after(async () => {
    await srv?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies a changed good file', async () => {
    assert.equal((await srv.anonymous.request('GET', '/api/v1/namespaces')).status, 403);
    await write(only('AlwaysAllow'));
    await eventually('the new file allows', async () => (await srv.anonymous.request('GET', '/api/v1/namespaces')).status === 200);
    assert.ok(srv.logs.some((l) => l.startsWith(`authorization config: reloaded "${file}"`)));
  });

  it('keeps the previous chain when the new file is bad', async () => {
    await write(`${HEAD}authorizers:\n- {type: AlwaysDeny, name: a}\n- {type: AlwaysAllow, name: a}\n`);
    await eventually('the bad file is reported', async () =>
      srv.logs.some((l) => l.includes('keeping the previous configuration') && l.includes('authorizers[1].name: Duplicate value: "a"')),
    );
    assert.equal((await srv.anonymous.request('GET', '/api/v1/namespaces')).status, 200);
    const metrics = (await srv.admin.request('GET', '/metrics')).text;
    assert.match(metrics, /apiserver_authorization_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
    assert.match(metrics, /apiserver_authorization_config_controller_automatic_reloads_total\{status="failure",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
    assert.match(metrics, /apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds\{status="failure"/);
  });

  it('applies a good file after a bad one', async () => {
    await write(only('AlwaysDeny'));
    await eventually('the good file denies again', async () => (await srv.anonymous.request('GET', '/api/v1/namespaces')).status === 403);
  });
});
