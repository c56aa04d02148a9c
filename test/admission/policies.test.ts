// ValidatingAdmissionPolicy end to end against a started server (RBAC, an
// audit log): kube's denial text, reason and code (also as kubectl prints
// it), Warn and Audit, params by name and selector with
// parameterNotFoundAction, failure policies, match conditions, variables,
// matchResources, the authorizer variable, DELETE with oldObject, dry-run,
// a change applying, and the check metrics.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { completeLines } from '../helpers/auditlog.js';
import type { Reply } from '../helpers/client.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { findKubectl } from '../e2e/helpers.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from '../crd/fixtures.js';

const A = '/apis/admissionregistration.k8s.io/v1';
const kubectl = findKubectl();
let s: TestServer;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-vap-'));
  await writeFile(
    join(dir, 'audit.yaml'),
    `apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources: [{group: '', resources: [configmaps]}]\n- level: None\n`,
  );
  s = await startTestServer({
    flags: ['--authorization-mode=RBAC', `--audit-policy-file=${join(dir, 'audit.yaml')}`, `--audit-log-path=${join(dir, 'audit.log')}`],
  });
});
after(async () => {
  await s?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A namespace labelled `vap: <id>`, which the test's policies select. */
async function namespace(id: string): Promise<string> {
  const r = await s.admin.request('POST', '/api/v1/namespaces', { metadata: { name: id, labels: { vap: id } } });
  assert.equal(r.status, 201, r.text);
  return id;
}

const RULES = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }];

async function policy(name: string, id: string, spec: Record<string, unknown>): Promise<void> {
  const body = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: RULES, namespaceSelector: { matchLabels: { vap: id } } }, ...spec },
  };
  const r = await s.admin.request('POST', `${A}/validatingadmissionpolicies`, body);
  assert.equal(r.status, 201, r.text);
}

async function binding(name: string, spec: Record<string, unknown>): Promise<void> {
  const body = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec };
  const r = await s.admin.request('POST', `${A}/validatingadmissionpolicybindings`, body);
  assert.equal(r.status, 201, r.text);
}

function cm(ns: string, name: string, data: Record<string, string>, query = '', headers: Record<string, string> = {}): Promise<Reply> {
  return s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps${query}`, { metadata: { name }, data }, headers);
}

/** Waits until the configuration is in force: a dry-run create of `data` is refused. */
async function inForce(ns: string, data: Record<string, string>): Promise<Reply> {
  return eventually('the policy to apply', async () => {
    const r = await cm(ns, 'probe', data, '?dryRun=All');
    return r.status >= 400 ? r : undefined;
  });
}

describe('ValidatingAdmissionPolicy', () => {
  it('denies with kube’s text, reason and code; messageExpression, message and the expression itself', async () => {
    const ns = await namespace('vap-deny');
    await policy('deny.example.com', ns, {
      validations: [
        { expression: 'size(object.data) < 3', messageExpression: "'too many keys: ' + string(size(object.data))" },
        { expression: "!object.metadata.name.startsWith('bad')", reason: 'Forbidden' },
        { expression: "!('secret' in object.data)", message: 'no secrets here', reason: 'RequestEntityTooLarge' },
      ],
    });
    await binding('deny-b', { policyName: 'deny.example.com', validationActions: ['Deny'] });
    const r = await inForce(ns, { a: '1', b: '2', c: '3' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `configmaps "probe" is forbidden: ValidatingAdmissionPolicy 'deny.example.com' with binding 'deny-b' denied request: too many keys: 3`,
      reason: 'Invalid',
      details: {
        name: 'probe',
        kind: 'configmaps',
        causes: [{ message: "ValidatingAdmissionPolicy 'deny.example.com' with binding 'deny-b' denied request: too many keys: 3" }],
      },
      code: 422,
    });
    const bad = await cm(ns, 'bad-name', {});
    assert.equal(bad.status, 403);
    assert.equal(bad.json.reason, 'Forbidden');
    assert.match(bad.json.message, /denied request: failed expression: !object\.metadata\.name\.startsWith\('bad'\)$/);
    const big = await cm(ns, 'x', { secret: 's' });
    assert.equal(big.status, 413);
    assert.match(big.json.message, /denied request: no secrets here$/);
    assert.equal((await cm(ns, 'fine', { a: '1' })).status, 201);
    // An update is admitted by the same rules.
    const up = await s.admin.request('PUT', `/api/v1/namespaces/${ns}/configmaps/fine`, { metadata: { name: 'fine' }, data: { a: '1', b: '2', c: '3' } });
    assert.equal(up.status, 422);
    if (kubectl) {
      const out = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(kubectl, ['--kubeconfig', s.kubeconfig, '-n', ns, 'create', 'configmap', 'bad-k', '--from-literal=a=1'], (err, _o, stderr) =>
          resolve({ code: err ? 1 : 0, stderr }),
        ),
      );
      assert.equal(out.code, 1);
      assert.equal(
        out.stderr.trim(),
        `error: failed to create configmap: configmaps "bad-k" is forbidden: ValidatingAdmissionPolicy 'deny.example.com' with binding 'deny-b' denied request: failed expression: !object.metadata.name.startsWith('bad')`,
      );
    }
  });

  it('Warn adds a Warning header and Audit the validation_failure annotation; the write goes through', async () => {
    const ns = await namespace('vap-warn');
    await policy('warn.example.com', ns, {
      validations: [{ expression: "object.metadata.name != 'flagged'", message: 'flagged name' }],
      auditAnnotations: [{ key: 'keys', valueExpression: 'string(size(object.data))' }],
    });
    await binding('warn-b', { policyName: 'warn.example.com', validationActions: ['Warn', 'Audit'] });
    const r = await eventually('the warning', async () => {
      const x = await cm(ns, 'flagged', { a: '1' }, '?dryRun=All');
      return x.headers['warning'] ? x : undefined;
    });
    assert.equal(r.status, 201);
    assert.equal(r.headers['warning'], `299 - "Validation failed for ValidatingAdmissionPolicy 'warn.example.com' with binding 'warn-b': flagged name"`);
    const created = await cm(ns, 'flagged', { a: '1', b: '2' });
    assert.equal(created.status, 201);
    const ev = await eventually('the audit event', async () => {
      const lines = await completeLines(join(dir, 'audit.log'));
      return lines
        .map((l) => JSON.parse(l))
        .find(
          (e) =>
            e.verb === 'create' &&
            e.objectRef?.namespace === ns &&
            !e.requestURI.includes('dryRun') &&
            e.stage === 'ResponseComplete' &&
            e.annotations?.['warn.example.com/keys'] === '2',
        );
    });
    assert.equal(ev.annotations['warn.example.com/keys'], '2');
    assert.deepEqual(JSON.parse(ev.annotations['validation.policy.admission.k8s.io/validation_failure']), [
      { message: 'flagged name', policy: 'warn.example.com', binding: 'warn-b', expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
    ]);
  });

  it('params by name and by selector, in the request’s namespace; parameterNotFoundAction', async () => {
    const ns = await namespace('vap-params');
    const limits = (name: string, max: string, labels: Record<string, string> = {}) =>
      s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name, labels }, data: { max } });
    assert.equal((await limits('limits', '1')).status, 201);
    await policy('params.example.com', ns, {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConditions: [{ name: 'not-params', expression: "!object.metadata.name.startsWith('limits')" }],
      validations: [{ expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' keys'" }],
    });
    await binding('params-name', {
      policyName: 'params.example.com',
      validationActions: ['Deny'],
      paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' },
    });
    const r = await inForce(ns, { a: '1', b: '2' });
    assert.match(r.json.message, /binding 'params-name' denied request: at most 1 keys$/);
    assert.equal((await cm(ns, 'one', { a: '1' })).status, 201);
    // paramRef.namespace: the param of another namespace.
    const nsOther = await namespace('vap-params-other');
    await policy('params-other.example.com', nsOther, {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [
        { expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' from ' + params.metadata.namespace" },
      ],
    });
    await binding('params-other', {
      policyName: 'params-other.example.com',
      validationActions: ['Deny'],
      paramRef: { name: 'limits', namespace: ns, parameterNotFoundAction: 'Deny' },
    });
    const other = await inForce(nsOther, { a: '1', b: '2' });
    assert.match(other.json.message, /binding 'params-other' denied request: at most 1 from vap-params$/);
    // A param the binding names that is not there: Deny refuses every request.
    const ns2 = await namespace('vap-params-missing');
    await policy('params-missing.example.com', ns2, {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'true' }],
    });
    await binding('missing-deny', {
      policyName: 'params-missing.example.com',
      validationActions: ['Deny'],
      paramRef: { name: 'nope', parameterNotFoundAction: 'Deny' },
    });
    const m = await inForce(ns2, {});
    assert.equal(m.status, 422);
    assert.match(
      m.json.message,
      /ValidatingAdmissionPolicy 'params-missing\.example\.com' with binding 'missing-deny' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/,
    );
    // A paramKind no served type has: the policy cannot be configured.
    const ns4 = await namespace('vap-params-kind');
    await policy('params-kind.example.com', ns4, { paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' }, validations: [{ expression: 'true' }] });
    await binding('kind-b', { policyName: 'params-kind.example.com', validationActions: ['Deny'], paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } });
    const k = await inForce(ns4, {});
    assert.equal(k.status, 422);
    assert.match(
      k.json.message,
      /ValidatingAdmissionPolicy 'params-kind\.example\.com' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example\.com\/v1, Kind=Nope'$/,
    );
    // By selector: every matching param is evaluated; Allow lets a request through without any.
    const ns3 = await namespace('vap-params-sel');
    const sel = (name: string, max: string) =>
      s.admin.request('POST', `/api/v1/namespaces/${ns3}/configmaps`, { metadata: { name, labels: { role: 'limit' } }, data: { max } });
    await policy('params-sel.example.com', ns3, {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConditions: [{ name: 'not-params', expression: "!has(object.metadata.labels) || !('role' in object.metadata.labels)" }],
      validations: [{ expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'limit ' + params.metadata.name" }],
    });
    await binding('sel-allow', {
      policyName: 'params-sel.example.com',
      validationActions: ['Deny'],
      paramRef: { selector: { matchLabels: { role: 'limit' } }, parameterNotFoundAction: 'Allow' },
    });
    await new Promise((res) => setTimeout(res, 300));
    assert.equal((await cm(ns3, 'before', { a: '1', b: '2', c: '3' })).status, 201, 'no params, Allow');
    assert.equal((await sel('lim-a', '2')).status, 201);
    assert.equal((await sel('lim-b', '1')).status, 201);
    const d = await inForce(ns3, { a: '1', b: '2' });
    assert.match(d.json.message, /denied request: limit lim-b$/);
  });

  it('failurePolicy: an evaluation error denies under Fail and is ignored under Ignore', async () => {
    const ns = await namespace('vap-fail');
    await policy('fail.example.com', ns, { failurePolicy: 'Fail', validations: [{ expression: "object.data.required == 'yes'" }] });
    await binding('fail-b', { policyName: 'fail.example.com', validationActions: ['Deny'] });
    const r = await inForce(ns, { other: '1' });
    assert.equal(r.status, 422);
    assert.match(r.json.message, /denied request: expression 'object\.data\.required == 'yes'' resulted in error: no such key: required$/);
    assert.equal((await cm(ns, 'ok', { required: 'yes' })).status, 201);
    const ns2 = await namespace('vap-ignore');
    await policy('ignore.example.com', ns2, {
      failurePolicy: 'Ignore',
      validations: [{ expression: "object.data.required == 'yes'" }, { expression: "object.metadata.name != 'nope'" }],
    });
    await binding('ignore-b', { policyName: 'ignore.example.com', validationActions: ['Deny'] });
    const nope = await inForceName(ns2, 'nope');
    assert.equal(nope.status, 422);
    assert.equal((await cm(ns2, 'errs', { other: '1' })).status, 201, 'the error is ignored');
  });

  it('variables, matchResources of the binding and excludeResourceRules', async () => {
    const ns = await namespace('vap-vars');
    await policy('vars.example.com', ns, {
      matchConstraints: {
        resourceRules: RULES,
        excludeResourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], resourceNames: ['exempt'] }],
        namespaceSelector: { matchLabels: { vap: ns } },
      },
      variables: [
        { name: 'keys', expression: 'object.data.size()' },
        { name: 'tooMany', expression: 'variables.keys > 1' },
      ],
      validations: [{ expression: '!variables.tooMany', messageExpression: "'has ' + string(variables.keys)" }],
    });
    await binding('vars-b', {
      policyName: 'vars.example.com',
      validationActions: ['Deny'],
      matchResources: { objectSelector: { matchLabels: { checked: 'yes' } } },
    });
    const probe = async () => {
      const x = await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, {
        metadata: { name: 'p', labels: { checked: 'yes' } },
        data: { a: '1', b: '2' },
      });
      return x.status >= 400 ? x : undefined;
    };
    const r = await eventually('the policy to apply', probe);
    assert.match(r.json.message, /denied request: has 2$/);
    assert.equal((await cm(ns, 'unlabelled', { a: '1', b: '2' })).status, 201, 'the binding’s object selector');
    const exempt = await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: 'exempt', labels: { checked: 'yes' } },
      data: { a: '1', b: '2' },
    });
    assert.equal(exempt.status, 201, 'excluded by name');
  });

  it('the authorizer variable asks the request’s authorizers about the requester', async () => {
    const ns = await namespace('vap-authz');
    const rb = await s.admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'alice-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    assert.equal(rb.status, 201, rb.text);
    await policy('authz.example.com', ns, {
      validations: [
        {
          expression:
            "!has(object.metadata.labels) || !('privileged' in object.metadata.labels) || authorizer.group('').resource('nodes').check('list').allowed()",
          messageExpression: "'user ' + request.userInfo.username + ' may not label privileged'",
        },
        { expression: "authorizer.requestResource.check('create').allowed()", message: 'cannot create' },
      ],
    });
    await binding('authz-b', { policyName: 'authz.example.com', validationActions: ['Deny'] });
    const asAlice = { 'Impersonate-User': 'alice' };
    const body = { metadata: { name: 'p', labels: { privileged: 'true' } }, data: {} };
    const r = await eventually('the policy to apply', async () => {
      const x = await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, body, asAlice);
      return x.status >= 400 ? x : undefined;
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /denied request: user alice may not label privileged$/);
    // The admin (system:masters) may list nodes; alice may create unlabelled ones.
    assert.equal((await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, body)).status, 201);
    assert.equal((await s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'q' }, data: {} }, asAlice)).status, 201);
  });

  it('DELETE sees oldObject; a deleted binding stops applying; the configurations themselves are exempt', async () => {
    const ns = await namespace('vap-delete');
    assert.equal((await cm(ns, 'keep', { locked: 'true' })).status, 201);
    await policy('delete.example.com', ns, {
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { vap: ns } },
      },
      validations: [{ expression: "request.operation == 'DELETE' && object == null && !('locked' in oldObject.data)", message: 'locked' }],
    });
    await binding('delete-b', { policyName: 'delete.example.com', validationActions: ['Deny'] });
    const denied = await eventually('the policy to apply', async () => {
      const x = await s.admin.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/keep?dryRun=All`);
      return x.status >= 400 ? x : undefined;
    });
    assert.equal(denied.status, 422);
    assert.match(denied.json.message, /^configmaps "keep" is forbidden: .*denied request: locked$/);
    assert.equal((await s.admin.request('DELETE', `${A}/validatingadmissionpolicybindings/delete-b`)).status, 200);
    await eventually('the binding to be gone', async () => (await s.admin.request('DELETE', `/api/v1/namespaces/${ns}/configmaps/keep`)).status === 200);
  });

  it('counts checks in kube’s metrics', async () => {
    const m = await s.admin.request('GET', '/metrics');
    assert.match(
      m.text,
      /apiserver_validating_admission_policy_check_total\{policy="deny\.example\.com",policy_binding="deny-b",error_type="no_error",enforcement_action="deny"\} [1-9]/,
    );
    assert.match(
      m.text,
      /apiserver_validating_admission_policy_check_total\{policy="warn\.example\.com",policy_binding="warn-b",error_type="no_error",enforcement_action="warn"\} [1-9]/,
    );
    assert.match(m.text, /apiserver_validating_admission_policy_check_duration_seconds_bucket\{le="1",policy="deny\.example\.com"/);
  });

  it('custom resources through matchPolicy Equivalent: the request and object in the matched version', async () => {
    const ns = await namespace('vap-crd');
    const crd = crontabCrd() as { metadata: { name: string }; spec: { versions: Array<Record<string, unknown>> } };
    const v1 = crd.spec.versions[0]!;
    crd.spec.versions = [v1, { ...structuredClone(v1), name: 'v2', storage: false }];
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    await waitEstablished(s, crd.metadata.name, `/apis/stable.example.com/v2/namespaces/${ns}/crontabs`);
    await policy('crd.example.com', ns, {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['stable.example.com'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['crontabs'] }],
        namespaceSelector: { matchLabels: { vap: ns } },
      },
      validations: [
        {
          expression: "object.spec.cronSpec != 'never'",
          messageExpression:
            "'matched ' + request.kind.version + ' (' + request.resource.version + ') for ' + request.requestKind.version + ', object ' + object.apiVersion",
        },
      ],
    });
    await binding('crd-b', { policyName: 'crd.example.com', validationActions: ['Deny'] });
    const body = crontab('c1', { cronSpec: 'never', image: 'x' });
    const r = await eventually('the policy to apply', async () => {
      const x = await s.admin.request('POST', `/apis/stable.example.com/v1/namespaces/${ns}/crontabs?dryRun=All`, body);
      return x.status >= 400 ? x : undefined;
    });
    assert.match(r.json.message, /denied request: matched v2 \(v2\) for v1, object stable\.example\.com\/v2$/);
    assert.equal(
      (await s.admin.request('POST', `/apis/stable.example.com/v1/namespaces/${ns}/crontabs`, crontab('c2', { cronSpec: '* * * * *' }))).status,
      201,
    );
  });

  it('namespaceObject, a failing audit annotation under Fail, a failing messageExpression falls back to message', async () => {
    const ns = await namespace('vap-ns');
    await policy('ns.example.com', ns, {
      validations: [
        { expression: "namespaceObject.metadata.labels.vap == 'vap-ns' && namespaceObject.metadata.name == request.namespace" },
        { expression: "object.metadata.name != 'fallback'", message: 'plain message', messageExpression: "'x' + object.data.missing" },
      ],
      auditAnnotations: [{ key: 'size', valueExpression: "object.metadata.name == 'annotation-error' ? string(object.data.missing) : null" }],
    });
    await binding('ns-b', { policyName: 'ns.example.com', validationActions: ['Deny'] });
    const r = await inForceName(ns, 'fallback');
    assert.match(r.json.message, /denied request: plain message$/);
    const e = await cm(ns, 'annotation-error', {});
    assert.equal(e.status, 422);
    assert.match(
      e.json.message,
      /denied request: expression 'object\.metadata\.name == 'annotation-error' \? string\(object\.data\.missing\) : null' resulted in error: no such key: missing$/,
    );
    assert.equal((await cm(ns, 'fine', {})).status, 201, 'namespaceObject is the request’s namespace');
  });

  it('kubectl get prints the policy and binding columns; kubectl explain reads their schema', { skip: kubectl ? false : 'kubectl not found' }, async () => {
    const run = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(kubectl!, ['--kubeconfig', s.kubeconfig, ...args], (err, out, stderr) => (err ? reject(new Error(stderr)) : resolve(out))),
      );
    const p = await run(['get', 'validatingadmissionpolicy', 'params.example.com']);
    assert.match(p, /^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\nparams\.example\.com\s+1\s+v1\/ConfigMap\s+\S+\n$/);
    const b = await run(['get', 'validatingadmissionpolicybinding', 'params-name', 'sel-allow']);
    assert.match(
      b,
      /^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\nparams-name\s+params\.example\.com\s+\*\/limits\s+\S+\nsel-allow\s+params-sel\.example\.com\s+role=limit\s+\S+\n$/,
    );
    const explain = await run(['explain', 'validatingadmissionpolicy.spec.validations']);
    assert.match(explain, /KIND:\s+ValidatingAdmissionPolicy\nVERSION:\s+v1\n\nFIELD: validations <\[\]Validation>/);
  });

  it('every write path: server-side apply, merge patch, deletecollection, a subresource', async () => {
    const ns = await namespace('vap-paths');
    await policy('paths.example.com', ns, {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] },
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['namespaces/status'] },
        ],
        namespaceSelector: { matchLabels: { vap: ns } },
      },
      validations: [
        { expression: "!has(request.subResource) || request.subResource != 'status'", messageExpression: "'status of ' + object.metadata.name + ' is frozen'" },
        { expression: "request.operation == 'DELETE' || !has(object.data) || !('forbidden' in object.data)", message: 'forbidden key' },
        { expression: "request.operation != 'DELETE' || !has(oldObject.data) || !('locked' in oldObject.data)", message: 'locked' },
      ],
    });
    await binding('paths-b', { policyName: 'paths.example.com', validationActions: ['Deny'] });
    await inForce(ns, { forbidden: 'x' });
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const apply = await s.admin.request(
      'PATCH',
      `${path}/applied?fieldManager=test`,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  forbidden: "1"\n',
      {
        'content-type': 'application/apply-patch+yaml',
      },
    );
    assert.equal(apply.status, 422, apply.text);
    assert.match(apply.json.message, /denied request: forbidden key$/);
    assert.equal((await cm(ns, 'patched', { a: '1' })).status, 201);
    const patch = await s.admin.request('PATCH', `${path}/patched`, { data: { forbidden: 'x' } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(patch.status, 422);
    assert.equal((await s.admin.request('GET', `${path}/patched`)).json.data.forbidden, undefined, 'nothing stored');
    assert.equal((await cm(ns, 'locked', { locked: 'yes' })).status, 201);
    const dc = await s.admin.request('DELETE', path);
    assert.equal(dc.status, 422);
    assert.match(dc.json.message, /^configmaps "locked" is forbidden: .*denied request: locked$/);
    assert.equal((await s.admin.request('GET', `${path}/locked`)).status, 200);
    const nsObj = (await s.admin.request('GET', `/api/v1/namespaces/${ns}`)).json;
    const st = await s.admin.request('PUT', `/api/v1/namespaces/${ns}/status`, nsObj);
    assert.equal(st.status, 422, st.text);
    assert.match(st.json.message, new RegExp(`^namespaces "${ns}" is forbidden: .*denied request: status of ${ns} is frozen$`));
  });

  it('status.typeChecking warns of expressions the matched kinds’ schemas refuse', async () => {
    await policy('typed.example.com', 'vap-typed', {
      validations: [
        { expression: 'object.spec.replicas > 1' },
        { expression: "object.data.all(k, k != '')", messageExpression: "'name: ' + object.metadata.nam" },
        { expression: 'object.metadata.name.size() < 64' },
      ],
    });
    const p = await eventually('the status', async () => {
      const r = await s.admin.request('GET', `${A}/validatingadmissionpolicies/typed.example.com`);
      return r.json.status?.observedGeneration === 1 ? r.json : undefined;
    });
    assert.deepEqual(p.status.typeChecking.expressionWarnings, [
      {
        fieldRef: 'spec.validations[0].expression',
        warning: "/v1, Kind=ConfigMap: compilation failed: ERROR: <input>:1:7: undefined field 'spec'\n | object.spec.replicas > 1\n | ......^\n",
      },
      {
        fieldRef: 'spec.validations[1].messageExpression',
        warning:
          "/v1, Kind=ConfigMap: compilation failed: ERROR: <input>:1:27: undefined field 'nam'\n | 'name: ' + object.metadata.nam\n | ..........................^\n",
      },
    ]);
    const managers = p.metadata.managedFields.map((m: { manager: string; subresource?: string }) => `${m.manager}/${m.subresource ?? ''}`);
    assert.ok(managers.includes('validatingadmissionpolicy-status-controller/status'), managers.join());
  });

  it('refuses a policy whose CEL does not compile, naming the field', async () => {
    const r = await s.admin.request('POST', `${A}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'broken' },
      spec: { matchConstraints: { resourceRules: RULES }, validations: [{ expression: 'object.data.size( > 1' }] },
    });
    assert.equal(r.status, 422);
    assert.equal(r.json.details.causes[0].field, 'spec.validations[0].expression');
    assert.match(r.json.details.causes[0].message, /^Invalid value: "object\.data\.size\( > 1": compilation failed: ERROR: <input>:1:/);
  });
});

/** Waits until a dry-run create of a configmap named `name` is refused. */
function inForceName(ns: string, name: string): Promise<Reply> {
  return eventually('the policy to apply', async () => {
    const r = await cm(ns, name, {}, '?dryRun=All');
    return r.status >= 400 ? r : undefined;
  });
}
