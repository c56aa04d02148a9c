// policy/v1 PodDisruptionBudgets and networking.k8s.io/v1 Ingresses,
// IngressClasses and NetworkPolicies through kubectl against a started server:
// kube's defaults and zero statuses, `kubectl get` columns, the validation
// people hit, the three patches, apply without a diff the second time, delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const MANIFEST = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx, parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com], secretName: tls}]
  rules:
  - host: a.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: b.example.com
    http: {paths: [{path: /api, pathType: Exact, backend: {service: {name: api, port: {name: http}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}], ports: [{port: 5432}]}]
`;

describe('policy/v1 and networking.k8s.io/v1 with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('applies client-side, then server-side without a diff', async () => {
    await ctx.k.ok(['apply', '-f', '-'], MANIFEST);
    const again = await ctx.k.ok(['apply', '-f', '-'], MANIFEST);
    // As against kube: a PDB's selector is patchStrategy=replace, so kubectl always sends it, and a
    // NetworkPolicy's rules are an atomic list the server defaulted (protocol TCP), so kubectl resends them.
    assert.match(again, /poddisruptionbudget.policy\/web configured/);
    assert.match(again, /ingressclass.networking.k8s.io\/nginx unchanged/);
    assert.match(again, /ingress.networking.k8s.io\/web unchanged/);
    assert.match(again, /networkpolicy.networking.k8s.io\/db configured/);
    // Nothing changed: the generations are still 1.
    for (const path of ['/apis/policy/v1/namespaces/default/poddisruptionbudgets/web', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/db']) {
      assert.equal((await ctx.s.admin.request('GET', path)).json.metadata.generation, 1, path);
    }
    await ctx.k.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], MANIFEST);
    const diff = await ctx.k.run(['diff', '--server-side', '--force-conflicts', '-f', '-'], MANIFEST);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
  });

  it('stores kube defaults and zero statuses', async () => {
    const pdb = (await ctx.s.admin.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).json;
    assert.deepEqual(pdb.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
    assert.equal(pdb.metadata.generation, 1);
    const ing = (await ctx.s.admin.request('GET', '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web')).json;
    assert.deepEqual(ing.status, { loadBalancer: {} });
    const np = (await ctx.s.admin.request('GET', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/db')).json;
    assert.deepEqual(np.spec.policyTypes, ['Ingress']);
    assert.deepEqual(np.spec.ingress[0].ports, [{ protocol: 'TCP', port: 5432 }]);
  });

  it('shows kubectl get columns', async () => {
    await ctx.s.admin.request(
      'PATCH',
      '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web/status',
      { status: { loadBalancer: { ingress: [{ ip: '10.0.0.9' }, { hostname: 'lb.example.com' }] } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    const out = await ctx.k.ok(['get', 'ing,pdb,netpol,ingressclass']);
    const lines = out.split('\n');
    const header = (prefix: string) => lines[lines.findIndex((l) => l.startsWith(prefix)) - 1]!.trim().split(/\s{2,}/);
    const row = (prefix: string) =>
      lines
        .find((l) => l.startsWith(prefix))!
        .trim()
        .split(/\s{2,}/);
    assert.deepEqual(header('ingress.networking.k8s.io/web'), ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE']);
    assert.deepEqual(row('ingress.networking.k8s.io/web').slice(0, 5), [
      'ingress.networking.k8s.io/web',
      'nginx',
      'a.example.com,b.example.com',
      '10.0.0.9,lb.example.com',
      '80, 443',
    ]);
    assert.deepEqual(header('poddisruptionbudget.policy/web'), ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE']);
    assert.deepEqual(row('poddisruptionbudget.policy/web').slice(0, 4), ['poddisruptionbudget.policy/web', '1', 'N/A', '0']);
    assert.deepEqual(header('networkpolicy.networking.k8s.io/db'), ['NAME', 'POD-SELECTOR', 'AGE']);
    assert.deepEqual(row('networkpolicy.networking.k8s.io/db').slice(0, 2), ['networkpolicy.networking.k8s.io/db', 'app=db']);
    assert.deepEqual(header('ingressclass.networking.k8s.io/nginx'), ['NAME', 'CONTROLLER', 'PARAMETERS', 'AGE']);
    assert.deepEqual(row('ingressclass.networking.k8s.io/nginx').slice(0, 3), [
      'ingressclass.networking.k8s.io/nginx',
      'k8s.io/ingress-nginx',
      'IngressParameters.k8s.example.com/external',
    ]);
  });

  it('refuses what kube refuses', async () => {
    const both = await ctx.k.run(['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"maxUnavailable":"120%"}}']);
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /spec: Invalid value: "object": minAvailable and maxUnavailable cannot be both set/);
    assert.match(both.stderr, /spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%/);
    const path = await ctx.k.run(['patch', 'ingress', 'web', '--type=json', '-p', '[{"op":"remove","path":"/spec/rules/0/http/paths/0/pathType"}]']);
    assert.notEqual(path.code, 0);
    assert.match(path.stderr, /spec.rules\[0\].http.paths\[0\].pathType: Required value/);
    const ctl = await ctx.k.run(['patch', 'ingressclass', 'nginx', '--type=merge', '-p', '{"spec":{"controller":"example.com/other"}}']);
    assert.match(ctl.stderr, /spec.controller: Invalid value: "example.com\/other": field is immutable/);
    // A strategic merge patch that is valid goes through and bumps the generation.
    await ctx.k.ok(['patch', 'netpol', 'db', '--type=strategic', '-p', '{"spec":{"egress":[{"ports":[{"port":53,"protocol":"UDP"}]}]}}']);
    const np = (await ctx.s.admin.request('GET', '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/db')).json;
    assert.equal(np.metadata.generation, 2);
    assert.deepEqual(np.spec.egress, [{ ports: [{ port: 53, protocol: 'UDP' }] }]);
  });

  it('deletes them', async () => {
    await ctx.k.ok(['delete', '-f', '-'], MANIFEST);
    assert.equal((await ctx.s.admin.request('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).status, 404);
  });
});
