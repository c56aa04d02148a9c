// access.gatehouse.dev/v1alpha1 explanations through a started server whose
// chain is Node, RBAC, ABAC and a real webhook peer (with match conditions),
// after the system:masters bypass: every kind of step and decision, RBAC's
// near misses, who may ask, and bad input.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { devPkiPaths } from '../../certs/devpki.js';
import { generateClientCert } from '../../certs/pki.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { canI, groupSubject, identity, KUBECTL, RBAC, roleBinding, saSubject, userSubject, type Identity } from '../authz/rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';
import { DEFAULT_RUNTIME_CONFIG, enabled } from '../../gateway/config/runtimeconfig.js';
import { subjectAccessExplanations } from '../../lib/registry/builtins/access.js';

const GV = '/apis/access.gatehouse.dev/v1alpha1';
const SAE = `${GV}/subjectaccessexplanations`;
const SELF = `${GV}/selfsubjectaccessexplanations`;
const sae = (spec: object) => ({ apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SubjectAccessExplanation', spec });
const HOOK_CONDITION = "request.user.startsWith('hook-')";
const ABAC_LINE = JSON.stringify({
  apiVersion: 'abac.authorization.kubernetes.io/v1beta1',
  kind: 'Policy',
  spec: { user: 'carol', namespace: '*', resource: 'leases', apiGroup: 'coordination.k8s.io' },
});

interface Step {
  name: string;
  type: string;
  decision: string;
  reason?: string;
  [k: string]: unknown;
}

describe('SubjectAccessExplanation', () => {
  let dir: string;
  let peer: WebhookPeer;
  let s: TestServer;
  let alice: Identity;

  const explainAll = async (spec: object) => {
    const r = await s.admin.request('POST', SAE, sae(spec));
    assert.equal(r.status, 201, r.text);
    return r.json.status as {
      allowed: boolean;
      denied?: boolean;
      decidedBy?: string;
      evaluationError?: string;
      steps: Step[];
      nearMisses?: Array<Record<string, any>>;
    };
  };
  const explain = explainAll;
  const decisions = (steps: Step[]) => steps.map((x) => `${x.name}:${x.decision}`);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-access-'));
    peer = await startWebhookPeer();
    const policy = join(dir, 'abac.jsonl');
    await writeFile(policy, `# carol reads leases\n${ABAC_LINE}\n`);
    const config = {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthorizationConfiguration',
      authorizers: [
        { type: 'Node', name: 'node' },
        { type: 'RBAC', name: 'rbac' },
        { type: 'ABAC', name: 'abac' },
        {
          type: 'Webhook',
          name: 'hook',
          webhook: {
            timeout: '2s',
            failurePolicy: 'NoOpinion',
            subjectAccessReviewVersion: 'v1',
            matchConditionSubjectAccessReviewVersion: 'v1',
            connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: await peer.kubeconfig(dir, 'hook') },
            matchConditions: [{ expression: HOOK_CONDITION }],
            authorizedTTL: '10m',
            unauthorizedTTL: '1ms',
          },
        },
      ],
    };
    const file = join(dir, 'authz.json');
    await writeFile(file, JSON.stringify(config));
    s = await startTestServer({
      flags: [`--authorization-config=${file}`, `--authorization-policy-file=${policy}`, '--runtime-config=access.gatehouse.dev/v1alpha1=true'],
    });
    for (const ns of ['team-a', 'prod']) await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const role = (name: string, rules: object[]) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: 'team-a' },
      rules,
    });
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/team-a/roles`,
      role('pod-reader', [
        { verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cm-a'] },
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      ]),
    );
    await s.admin.request('POST', `${RBAC}/namespaces/team-a/roles`, role('pod-watcher', [{ verbs: ['watch'], apiGroups: [''], resources: ['pods'] }]));
    await s.admin.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'alice-pods', 'Role', 'pod-reader', [userSubject('alice')]));
    await s.admin.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'bob-watch', 'Role', 'pod-watcher', [userSubject('bob')]));
    // A pod on node n1 that mounts secret s1: the Node authorizer's graph.
    await s.admin.request('POST', '/api/v1/namespaces/team-a/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1', namespace: 'team-a' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', secret: { secretName: 's1' } }] },
    });
    alice = await identity(s, 'alice');
    await eventually('the binding', () => canI(alice.client, { verb: 'list', resource: 'pods', namespace: 'team-a' }), { timeoutMs: 5000 });
    await eventually(
      'the node graph',
      async () =>
        (
          await explain({
            user: 'system:node:n1',
            groups: ['system:nodes'],
            resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team-a', name: 's1' },
          })
        ).allowed,
      { timeoutMs: 5000 },
    );
  });
  after(async () => {
    alice?.client.close();
    await s?.close();
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is alpha: off by default, served and discoverable when --runtime-config turns it on', async () => {
    assert.equal(enabled(DEFAULT_RUNTIME_CONFIG, subjectAccessExplanations), false);
    const d = await s.admin.request('GET', GV);
    assert.equal(d.status, 200);
    const byName = new Map(d.json.resources.map((r: { name: string; verbs: string[]; kind: string }) => [r.name, r]));
    assert.deepEqual((byName.get('subjectaccessexplanations') as { verbs: string[] }).verbs, ['create']);
    assert.equal((byName.get('selfsubjectaccessexplanations') as { kind: string }).kind, 'SelfSubjectAccessExplanation');
    const o = await s.admin.request('GET', '/openapi/v3/apis/access.gatehouse.dev/v1alpha1');
    assert.equal(o.status, 200);
    const schemas = o.json.components.schemas;
    assert.ok(schemas['dev.gatehouse.access.v1alpha1.SubjectAccessExplanation'], 'the kind has a schema');
    assert.ok(schemas['dev.gatehouse.access.v1alpha1.ExplanationStep'].properties.rbac);
    assert.ok(schemas['io.k8s.api.authorization.v1.SubjectAccessReviewSpec'], 'the spec is the SubjectAccessReview spec');
    assert.ok(o.json.paths[`${GV}/subjectaccessexplanations`].post);
    const v2 = await s.admin.request('GET', '/openapi/v2');
    assert.equal(v2.status, 200);
    assert.ok(v2.json.definitions['dev.gatehouse.access.v1alpha1.SubjectsReview'], 'in the v2 document too');
    assert.ok(v2.json.definitions['io.k8s.apimachinery.pkg.runtime.RawExtension'], "the raw fields' definition is there");
  });

  it('names the binding, role and rule RBAC allowed by; later authorizers are Skipped', async () => {
    const st = await explain({ user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } });
    assert.equal(st.allowed, true);
    assert.equal(st.decidedBy, 'rbac');
    assert.deepEqual(decisions(st.steps), ['privileged-groups:NoOpinion', 'node:NoOpinion', 'rbac:Allow', 'abac:Skipped', 'hook:Skipped']);
    const rbac = st.steps[2]!;
    assert.equal(rbac.type, 'RBAC');
    assert.deepEqual(rbac['rbac'], {
      binding: { kind: 'RoleBinding', namespace: 'team-a', name: 'alice-pods' },
      role: { kind: 'Role', namespace: 'team-a', name: 'pod-reader' },
      ruleIndex: 1,
      subject: { kind: 'User', name: 'alice' },
    });
    assert.equal(st.nearMisses, undefined);
  });

  it('lists near misses of rules bound to the subject only, one attribute each', async () => {
    // Bindings to other subjects (one more group: cluster-admin's system:masters at least) are the next test's.
    const explain = async (spec: object) => {
      const st = await explainAll(spec);
      const rules = (st.nearMisses ?? []).filter((m) => m['attribute'] !== 'group' && m['attribute'] !== 'serviceaccount namespace');
      return { ...st, nearMisses: rules.length > 0 ? rules : undefined };
    };
    const verb = await explain({ user: 'alice', resourceAttributes: { verb: 'watch', resource: 'pods', namespace: 'team-a' } });
    assert.equal(verb.allowed, false);
    assert.equal(verb.denied, undefined);
    assert.equal(verb.decidedBy, undefined);
    // bob's binding grants watch in team-a: it is not alice's and must not appear.
    assert.deepEqual(
      verb.nearMisses!.map((m) => [m['attribute'], m['requested'], m['granted'], m['rbac'].ruleIndex]),
      [['verb', 'watch', ['get', 'list'], 1]],
    );
    assert.equal(verb.nearMisses![0]!['rbac'].binding.name, 'alice-pods');
    const ns = await explain({ user: 'alice', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'prod' } });
    assert.deepEqual(
      ns.nearMisses!.map((m) => [m['attribute'], m['requested'], m['granted']]),
      [['namespace', 'prod', ['team-a']]],
    );
    const name = await explain({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'team-a', name: 'cm-b' } });
    // Closest first: another name in rule 0 before another resource in rule 1.
    assert.deepEqual(
      name.nearMisses!.map((m) => [m['attribute'], m['requested'], m['granted'], m['rbac'].ruleIndex]),
      [
        ['resourceName', 'cm-b', ['cm-a'], 0],
        ['resource', 'configmaps', ['pods'], 1],
      ],
    );
    const group = await explain({ user: 'alice', resourceAttributes: { verb: 'get', group: 'apps', resource: 'pods', namespace: 'team-a' } });
    assert.deepEqual(
      group.nearMisses!.map((m) => [m['attribute'], m['requested'], m['granted']]),
      [['apiGroup', 'apps', ['']]],
    );
    const none = await explain({ user: 'nobody', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'team-a' } });
    assert.equal(none.nearMisses, undefined);
  });

  it('SubjectAccessExplanation adds bindings that would apply with one more group or another ServiceAccount namespace; the self form never does', async () => {
    await s.admin.request('POST', `${RBAC}/namespaces/team-a/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'pod-deleter', namespace: 'team-a' },
      rules: [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }],
    });
    // ops (a group alice is not in) and the ServiceAccount robot of namespace ci may delete pods in team-a.
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/team-a/rolebindings`,
      roleBinding('team-a', 'ops-delete', 'Role', 'pod-deleter', [groupSubject('ops'), saSubject('ci', 'robot')]),
    );
    // The same in prod: another scope, two attributes off, never a near miss.
    await s.admin.request('POST', `${RBAC}/namespaces/prod/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'pod-deleter', namespace: 'prod' },
      rules: [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }],
    });
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/prod/rolebindings`,
      roleBinding('prod', 'prod-ops-delete', 'Role', 'pod-deleter', [groupSubject('prod-ops'), saSubject('ci', 'robot')]),
    );
    const del = { verb: 'delete', resource: 'pods', namespace: 'team-a' };
    const robot = {
      user: 'system:serviceaccount:team-a:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
      resourceAttributes: del,
    };
    const show = (m: Record<string, any>) => [m['attribute'], m['requested'], m['granted'], m['rbac'].binding.name, m['rbac'].subject.kind];
    let st = await explain(robot);
    await eventually(
      'the ops-delete binding',
      async () => {
        st = await explain(robot);
        return (st.nearMisses ?? []).some((m) => m['rbac'].binding.name === 'ops-delete');
      },
      { timeoutMs: 5000 },
    );
    assert.equal(st.allowed, false);
    // The ServiceAccount's own name first, then groups: the narrow Role before cluster-admin's `*` (bound to system:masters).
    assert.deepEqual(st.nearMisses!.slice(0, 2).map(show), [
      ['serviceaccount namespace', 'team-a', ['ci'], 'ops-delete', 'ServiceAccount'],
      ['group', undefined, ['ops'], 'ops-delete', 'Group'],
    ]);
    assert.deepEqual(st.nearMisses![0]!['rbac'], {
      binding: { kind: 'RoleBinding', namespace: 'team-a', name: 'ops-delete' },
      role: { kind: 'Role', namespace: 'team-a', name: 'pod-deleter' },
      ruleIndex: 0,
      subject: { kind: 'ServiceAccount', namespace: 'ci', name: 'robot' },
    });
    assert.ok(
      st.nearMisses!.some((m) => m['attribute'] === 'group' && m['granted'][0] === 'system:masters'),
      "cluster-admin's group is one more group too",
    );
    assert.ok(!st.nearMisses!.some((m) => m['rbac'].binding.name === 'prod-ops-delete'), 'a binding of another namespace is not one subject away');
    // Not a ServiceAccount: only the group.
    const forAlice = await explain({ user: 'alice', resourceAttributes: del });
    assert.deepEqual(forAlice.nearMisses!.filter((m) => m['rbac'].binding.name === 'ops-delete').map(show), [
      ['group', undefined, ['ops'], 'ops-delete', 'Group'],
    ]);
    // alice's own rule (get, list pods) is closer than any other subject's binding.
    assert.equal(forAlice.nearMisses![0]!['attribute'], 'verb');
    // A group alice is in is no near miss: with ops she is allowed.
    const withOps = await explain({ user: 'alice', groups: ['ops'], resourceAttributes: del });
    assert.equal(withOps.allowed, true);

    // The self form: the same questions, asked by alice and by robot themselves, reveal no other subject's binding.
    const selfSpec = { apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SelfSubjectAccessExplanation', spec: { resourceAttributes: del } };
    const robotId = await identity(s, 'system:serviceaccount:team-a:robot', ['system:serviceaccounts', 'system:serviceaccounts:team-a']);
    try {
      for (const c of [alice.client, robotId.client]) {
        const r = await c.request('POST', SELF, selfSpec);
        assert.equal(r.status, 201, r.text);
        assert.equal(r.json.status.allowed, false);
        const misses: Array<Record<string, any>> = r.json.status.nearMisses ?? [];
        assert.deepEqual(
          misses.filter((m) => m['attribute'] === 'group' || m['attribute'] === 'serviceaccount namespace'),
          [],
        );
        assert.ok(!JSON.stringify(r.json.status).includes('ops-delete'), 'no trace of the binding');
      }
      // alice still learns about her own rule.
      const mine = await alice.client.request('POST', SELF, selfSpec);
      assert.deepEqual(
        mine.json.status.nearMisses.map((m: any) => [m.attribute, m.rbac.binding.name]),
        [['verb', 'alice-pods']],
      );
    } finally {
      robotId.client.close();
    }
  });

  it('keeps at most 10 near misses in all, the closest', async () => {
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        s.admin.request(
          'POST',
          `${RBAC}/namespaces/team-a/rolebindings`,
          roleBinding('team-a', `crowd-${String(i).padStart(2, '0')}`, 'Role', 'pod-watcher', [groupSubject(`crowd-${i}`)]),
        ),
      ),
    );
    const spec = { user: 'alice', resourceAttributes: { verb: 'watch', resource: 'pods', namespace: 'team-a' } };
    let st = await explain(spec);
    await eventually(
      'the crowd bindings',
      async () => {
        st = await explain(spec);
        return (st.nearMisses ?? []).filter((m) => String(m['rbac'].binding.name).startsWith('crowd-')).length >= 9;
      },
      { timeoutMs: 5000 },
    );
    assert.equal(st.nearMisses!.length, 10);
    // alice's own rule (verb) first, then nine of the twelve crowd groups (bob's binding names a user: never a near miss).
    assert.deepEqual(
      st.nearMisses!.map((m) => m['attribute']),
      ['verb', ...Array(9).fill('group')],
    );
    assert.ok(!st.nearMisses!.some((m) => m['rbac'].binding.name === 'bob-watch'), 'a binding to another user is no near miss');
  });

  it('names the ABAC policy line', async () => {
    const st = await explain({ user: 'carol', resourceAttributes: { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'prod' } });
    assert.equal(st.decidedBy, 'abac');
    assert.deepEqual(decisions(st.steps), ['privileged-groups:NoOpinion', 'node:NoOpinion', 'rbac:NoOpinion', 'abac:Allow', 'hook:Skipped']);
    const abac = st.steps[3]!['abac'] as { line: number; policy: Record<string, unknown> };
    assert.equal(abac.line, 2);
    assert.equal(abac.policy['user'], 'carol');
    assert.equal(abac.policy['resource'], 'leases');
  });

  it("shows the webhook's match conditions, its answer, and whether it came from the cache", async () => {
    const spec = { user: 'hook-allow', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'team-a' } };
    const before = peer.received.length;
    const first = await explain(spec);
    assert.equal(first.decidedBy, 'hook');
    assert.equal(first.steps[3]!.reason, 'No policy matched.');
    assert.deepEqual(first.steps[4], {
      name: 'hook',
      type: 'Webhook',
      decision: 'Allow',
      reason: 'peer says yes',
      webhook: {
        called: true,
        cached: false,
        answer: { allowed: true, reason: 'peer says yes' },
        matchConditions: [{ expression: HOOK_CONDITION, result: 'true' }],
      },
    });
    assert.equal(peer.received.length, before + 1);
    const second = await explain(spec);
    assert.deepEqual((second.steps[4]!['webhook'] as Record<string, unknown>)['cached'], true);
    assert.deepEqual((second.steps[4]!['webhook'] as Record<string, unknown>)['called'], false);
    assert.equal(peer.received.length, before + 1, 'answered from the cache');

    const skipped = await explain({ user: 'dave', resourceAttributes: { verb: 'get', resource: 'pods' } });
    assert.deepEqual(skipped.steps[4], {
      name: 'hook',
      type: 'Webhook',
      decision: 'NoOpinion',
      webhook: { called: false, cached: false, matchConditions: [{ expression: HOOK_CONDITION, result: 'false' }] },
    });

    const denied = await explain({ user: 'hook-deny', resourceAttributes: { verb: 'get', resource: 'pods' } });
    assert.equal(denied.denied, true);
    assert.equal(denied.steps[4]!.decision, 'Deny');

    const failed = await explain({ user: 'hook-500', resourceAttributes: { verb: 'get', resource: 'pods' } });
    assert.equal(failed.allowed, false);
    assert.equal(failed.steps[4]!.decision, 'Error');
    assert.match(failed.evaluationError!, /authorization webhook "hook" failed/);
  });

  it("shows the Node authorizer's graph path and the system:masters bypass", async () => {
    const st = await explain({
      user: 'system:node:n1',
      groups: ['system:nodes'],
      resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team-a', name: 's1' },
    });
    assert.equal(st.decidedBy, 'node');
    assert.deepEqual(st.steps[1]!['node'], { node: 'n1', rule: 'graph', path: ['secret team-a/s1', '1 pod', 'node n1'] });
    const other = await explain({
      user: 'system:node:n2',
      groups: ['system:nodes'],
      resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team-a', name: 's1' },
    });
    assert.equal(other.steps[1]!.decision, 'NoOpinion');
    assert.equal(other.steps[1]!.reason, "no relationship found between node 'n2' and this object");
    const masters = await explain({ user: 'root', groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } });
    assert.equal(masters.decidedBy, 'privileged-groups');
    assert.deepEqual(masters.steps[0], { name: 'privileged-groups', type: 'Privileged', decision: 'Allow', privileged: { group: 'system:masters' } });
    assert.deepEqual(decisions(masters.steps).slice(1), ['node:Skipped', 'rbac:Skipped', 'abac:Skipped', 'hook:Skipped']);
  });

  it('the self form is for every authenticated user and explains the caller; the other needs create', async () => {
    const forbidden = await alice.client.request(
      'POST',
      SAE,
      sae({ user: 'bob', resourceAttributes: { verb: 'watch', resource: 'pods', namespace: 'team-a' } }),
    );
    assert.equal(forbidden.status, 403);
    const self = await alice.client.request('POST', SELF, {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SelfSubjectAccessExplanation',
      spec: { resourceAttributes: { verb: 'watch', resource: 'pods', namespace: 'team-a' } },
    });
    assert.equal(self.status, 201, self.text);
    assert.equal(self.json.kind, 'SelfSubjectAccessExplanation');
    assert.equal(self.json.status.allowed, false);
    // Alice's own near miss, never bob's binding that grants watch.
    assert.deepEqual(
      self.json.status.nearMisses.map((m: any) => m.rbac.binding.name),
      ['alice-pods'],
    );
  });

  it('SubjectsReview lists who can: the bypass, RBAC users, groups (aggregated view) and ServiceAccounts, Node, ABAC; incomplete for the webhook', async () => {
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/team-a/rolebindings`,
      roleBinding('team-a', 'viewers', 'ClusterRole', 'view', [groupSubject('viewers'), saSubject('team-a', 'robot')]),
    );
    const who = async (resourceAttributes: object) => {
      const r = await s.admin.request('POST', `${GV}/subjectsreviews`, {
        apiVersion: 'access.gatehouse.dev/v1alpha1',
        kind: 'SubjectsReview',
        spec: { resourceAttributes },
      });
      assert.equal(r.status, 201, r.text);
      return r.json.status as {
        subjects: Array<{ kind: string; name: string; namespace?: string; allowedBy: Array<Record<string, any>> }>;
        incomplete?: boolean;
        incompleteAuthorizers?: Array<{ name: string; reason: string }>;
      };
    };
    const key = (x: { kind: string; name: string; namespace?: string }) => `${x.kind}:${x.namespace ? `${x.namespace}/` : ''}${x.name}`;
    let st = await who({ verb: 'list', resource: 'pods', namespace: 'team-a' });
    await eventually(
      'the viewers binding',
      async () => {
        st = await who({ verb: 'list', resource: 'pods', namespace: 'team-a' });
        return st.subjects.some((x) => x.name === 'viewers');
      },
      { timeoutMs: 5000 },
    );
    const keys = st.subjects.map(key);
    for (const k of ['Group:system:masters', 'Group:viewers', 'User:alice', 'ServiceAccount:team-a/robot'])
      assert.ok(keys.includes(k), `${k} in ${keys.join(', ')}`);
    assert.ok(!keys.includes('User:bob'), 'bob may only watch');
    // AuthorizeNodeWithSelectors: a node lists pods only with its spec.nodeName selector; services by kube's static node rules.
    assert.ok(!keys.includes('Group:system:nodes'));
    const services = await who({ verb: 'list', resource: 'services', namespace: 'team-a' });
    assert.deepEqual(
      services.subjects.find((x) => x.name === 'system:nodes')!.allowedBy.map((b) => b['node']),
      [{ node: '*', rule: 'static' }],
    );
    const viewers = st.subjects.find((x) => x.name === 'viewers')!;
    assert.deepEqual(
      viewers.allowedBy.map((b) => [b['name'], b['rbac'].binding.name, b['rbac'].role.name]),
      [['rbac', 'viewers', 'view']],
    );
    assert.equal(st.subjects.find((x) => x.name === 'system:masters')!.allowedBy[0]!['type'], 'Privileged');
    assert.equal(st.incomplete, true);
    assert.deepEqual(
      st.incompleteAuthorizers!.map((x) => x.name),
      ['hook'],
    );

    const leases = await who({ verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'prod' });
    const carol = leases.subjects.find((x) => x.name === 'carol')!;
    assert.equal(carol.allowedBy[0]!['abac'].line, 2);
    const secret = await who({ verb: 'get', resource: 'secrets', namespace: 'team-a', name: 's1' });
    const n1 = secret.subjects.find((x) => x.name === 'system:node:n1')!;
    assert.deepEqual(n1.allowedBy[0]!['node'], { node: 'n1', rule: 'graph', path: ['secret team-a/s1', '1 pod', 'node n1'] });
    assert.ok(!secret.subjects.some((x) => x.name === 'system:nodes'), 'not every node');

    const bad = await s.admin.request('POST', `${GV}/subjectsreviews`, {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SubjectsReview',
      spec: { user: 'x', resourceAttributes: { verb: 'get' } },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.json.message, /spec\.user: Invalid value: "x": must be empty/);
    const forbidden = await alice.client.request('POST', `${GV}/subjectsreviews`, {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SubjectsReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    assert.equal(forbidden.status, 403);
  });

  it('kubectl gatehouse why / who-can, run by real kubectl with a client-certificate kubeconfig', { skip: KUBECTL ? false : 'no kubectl' }, async () => {
    const bin = fileURLToPath(new URL('../../bin', import.meta.url));
    const kubectl = (kubeconfig: string, args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          KUBECTL!,
          ['gatehouse', ...args],
          { env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, KUBECONFIG: kubeconfig, HOME: dir }, timeout: 60_000 },
          (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
        );
      });
    const why = await kubectl(alice.kubeconfig, ['why', 'watch', 'pods', '-n', 'team-a']);
    assert.equal(why.code, 0, why.stderr);
    assert.match(why.stdout, /rbac\s+RBAC\s+NoOpinion/);
    assert.match(why.stdout, /Result: not allowed/);
    assert.match(why.stdout, /rule 1 of Role team-a\/pod-reader \(RoleBinding team-a\/alice-pods\) grants verb get, list, not "watch"/);
    const allowed = await kubectl(alice.kubeconfig, ['why', 'list', 'pods', '-n', 'team-a']);
    assert.match(allowed.stdout, /rbac\s+RBAC\s+Allow\s+RoleBinding team-a\/alice-pods → Role team-a\/pod-reader, rule 1/);
    assert.match(allowed.stdout, /Result: allowed by rbac/);
    // alice may not ask about others, nor who can: the server's 403 in words.
    const as = await kubectl(alice.kubeconfig, ['why', '--as', 'bob', 'get', 'pods']);
    assert.equal(as.code, 1);
    assert.match(as.stderr, /forbidden/);
    const admin = await identity(s, 'plugin-admin', ['system:masters']);
    try {
      const who = await kubectl(admin.kubeconfig, ['who-can', 'list', 'pods', '-n', 'team-a']);
      assert.equal(who.code, 0, who.stderr);
      assert.match(who.stdout, /User\s+alice\s+rbac: RoleBinding team-a\/alice-pods → Role team-a\/pod-reader, rule 1/);
      assert.match(who.stdout, /Incomplete: hook \(Webhook\)/);
      // The privileged form's near misses of other subjects, in words (ops-delete is the earlier test's binding).
      const robot = await kubectl(admin.kubeconfig, [
        'why',
        '--as',
        'system:serviceaccount:team-a:robot',
        '--as-group',
        'system:serviceaccounts',
        'delete',
        'pods',
        '-n',
        'team-a',
      ]);
      assert.equal(robot.code, 0, robot.stderr);
      assert.match(
        robot.stdout,
        /rule 0 of Role team-a\/pod-deleter \(RoleBinding team-a\/ops-delete\) would apply to the ServiceAccount in namespace ci, not "team-a"/,
      );
      assert.match(robot.stdout, /rule 0 of Role team-a\/pod-deleter \(RoleBinding team-a\/ops-delete\) would apply with group ops/);
      // A kubeconfig whose user is an exec plugin handing out a client certificate.
      const pki = devPkiPaths(s.dataDir);
      const [caCert, caKey] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.caKey, 'utf8')]);
      const leaf = generateClientCert({ certPem: caCert, keyPem: caKey }, { user: 'alice', groups: [] });
      const script = join(dir, 'exec-cred.mjs');
      await writeFile(
        script,
        `process.stdout.write(${JSON.stringify(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: leaf.certPem, clientKeyData: leaf.keyPem } }))});\n`,
      );
      const execConfig = join(dir, 'exec.kubeconfig');
      await writeFile(
        execConfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'c',
          clusters: [{ name: 'g', cluster: { server: s.url, 'certificate-authority-data': Buffer.from(caCert).toString('base64') } }],
          users: [
            {
              name: 'alice',
              user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script], interactiveMode: 'Never' } },
            },
          ],
          contexts: [{ name: 'c', context: { cluster: 'g', user: 'alice' } }],
        }),
      );
      const viaExec = await kubectl(execConfig, ['why', 'list', 'pods', '-n', 'team-a']);
      assert.equal(viaExec.code, 0, viaExec.stderr);
      assert.match(viaExec.stdout, /Result: allowed by rbac/);
      const usage = await kubectl(admin.kubeconfig, ['who-can', 'list']);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /VERB and RESOURCE/);
    } finally {
      admin.client.close();
    }
  });

  it('refuses bad specs as SubjectAccessReview does, naming the field', async () => {
    const cases: Array<[object, number, RegExp]> = [
      [
        sae({ resourceAttributes: { verb: 'get', resource: 'pods' } }),
        422,
        /^SubjectAccessExplanation\.access\.gatehouse\.dev "" is invalid: spec\.user: Invalid value: "": at least one of user or group must be specified/,
      ],
      [sae({ user: 'a' }), 422, /spec\.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified/],
      [
        sae({ user: 'a', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/', verb: 'get' } }),
        422,
        /spec\.nonResourceAttributes: Invalid value: .*: cannot be specified in combination with resourceAttributes/,
      ],
      [sae({ user: 'a', resourceAttributes: 'pods' }), 400, /spec\.resourceAttributes must be an object/],
      [sae({ user: 'a', groups: 'dev', resourceAttributes: { verb: 'get' } }), 400, /spec\.groups must be a list of strings/],
      [
        { apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SubjectAccessReview', spec: {} },
        400,
        /the kind in the data \(SubjectAccessReview\) does not match the expected kind \(SubjectAccessExplanation\)/,
      ],
    ];
    for (const [body, code, message] of cases) {
      const r = await s.admin.request('POST', SAE, body);
      assert.equal(r.status, code, JSON.stringify(body));
      assert.match(r.json.message, message);
    }
    const get = await s.admin.request('GET', SAE);
    assert.equal(get.status, 405);
  });

  it('unknown fields follow fieldValidation, as on SubjectAccessReview: Strict 400 naming the field, Warn a warning, Ignore silence', async () => {
    const spec = { user: 'alice', foo: 'x', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } };
    const strict = await s.admin.request('POST', `${SAE}?fieldValidation=Strict`, sae(spec));
    assert.equal(strict.status, 400);
    assert.equal(
      strict.json.message,
      'SubjectAccessExplanation in version "v1alpha1" cannot be handled as a SubjectAccessExplanation: strict decoding error: unknown field "spec.foo"',
    );
    const warn = await s.admin.request('POST', SAE, sae(spec));
    assert.equal(warn.status, 201);
    assert.equal(warn.headers['warning'], '299 - "unknown field \\"spec.foo\\""');
    assert.equal(warn.json.spec.foo, undefined);
    assert.equal(warn.json.status.allowed, true);
    const ignore = await s.admin.request('POST', `${SAE}?fieldValidation=Ignore`, sae(spec));
    assert.equal(ignore.status, 201);
    assert.equal(ignore.headers['warning'], undefined);
    // The self form's spec has no user: a user there is an unknown field, not a question about someone else.
    const self = await alice.client.request('POST', `${SELF}?fieldValidation=Strict`, {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SelfSubjectAccessExplanation',
      spec: { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } },
    });
    assert.equal(self.status, 400);
    assert.match(self.json.message, /unknown field "spec\.user"/);
    const selfWarn = await alice.client.request('POST', SELF, {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SelfSubjectAccessExplanation',
      spec: { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'team-a' } },
    });
    assert.equal(selfWarn.status, 201);
    assert.match(String(selfWarn.headers['warning']), /unknown field \\"spec\.user\\"/);
    assert.equal(selfWarn.json.spec.user, undefined, 'explained for alice, the caller');
    // SubjectsReview: a subject is refused (422) whatever the level's view of it; other unknown fields as above.
    const who = (q: string, spec: object) =>
      s.admin.request('POST', `${GV}/subjectsreviews${q}`, { apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SubjectsReview', spec });
    const whoStrict = await who('?fieldValidation=Strict', { resourceAttributes: { verb: 'get', resource: 'pods', extra: 1 } });
    assert.equal(whoStrict.status, 400);
    assert.match(
      whoStrict.json.message,
      /^SubjectsReview in version "v1alpha1" cannot be handled as a SubjectsReview: strict decoding error: unknown field "spec\.resourceAttributes\.extra"$/,
    );
    const whoUser = await who('?fieldValidation=Ignore', { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } });
    assert.equal(whoUser.status, 422);
    assert.match(whoUser.json.message, /spec\.user: Invalid value: "x": must be empty/);
  });
});

describe('a server without --runtime-config for the group', { skip: KUBECTL ? false : 'no kubectl' }, () => {
  it('fails with a message naming the group and the flag', async () => {
    const s = await startTestServer();
    const admin = await identity(s, 'plain-admin', ['system:masters']);
    try {
      const bin = fileURLToPath(new URL('../../bin', import.meta.url));
      const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          KUBECTL!,
          ['gatehouse', 'why', 'get', 'pods'],
          { env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, KUBECONFIG: admin.kubeconfig, HOME: s.dataDir }, timeout: 60_000 },
          (err, _stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
        );
      });
      assert.equal((await s.admin.request('GET', GV)).status, 404);
      const groups = (await s.admin.request('GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
      assert.ok(!groups.includes('access.gatehouse.dev'), 'alpha: off by default');
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /the server does not serve access\.gatehouse\.dev\/v1alpha1 selfsubjectaccessexplanations \(a Gatehouse started with --runtime-config=access\.gatehouse\.dev\/v1alpha1=true does\)/,
      );
    } finally {
      admin.client.close();
      await s.close();
    }
  });
});
