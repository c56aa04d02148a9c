// A Helm-rendered chart (one multi-document manifest: ServiceAccount,
// ConfigMap, Role, RoleBinding, Service, Deployment, Ingress, HPA, PDB) applied with
// kubectl client-side and server-side, then again: the second server-side apply
// changes nothing and `kubectl diff` finds no difference; `kubectl explain`
// reads the published schema of the new kinds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const labels = '{app.kubernetes.io/name: shop, app.kubernetes.io/instance: rel}';
const CHART = `---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata: {name: rel-shop, labels: ${labels}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: rel-shop, labels: ${labels}}
data: {LOG_LEVEL: info}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rel-shop}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rel-shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rel-shop}
subjects: [{kind: ServiceAccount, name: rel-shop, namespace: default}]
---
apiVersion: v1
kind: Service
metadata: {name: rel-shop, labels: ${labels}}
spec:
  type: ClusterIP
  selector: ${labels}
  ports: [{name: http, port: 80, targetPort: http, protocol: TCP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: rel-shop, labels: ${labels}}
spec:
  replicas: 2
  selector: {matchLabels: ${labels}}
  template:
    metadata: {labels: ${labels}}
    spec:
      serviceAccountName: rel-shop
      containers:
      - name: shop
        image: "nginx:1.27.0"
        imagePullPolicy: IfNotPresent
        ports: [{name: http, containerPort: 80, protocol: TCP}]
        envFrom: [{configMapRef: {name: rel-shop}}]
        livenessProbe: {httpGet: {path: /, port: http}}
        readinessProbe: {httpGet: {path: /, port: http}}
        resources: {limits: {cpu: 100m, memory: 128Mi}, requests: {cpu: 100m, memory: 128Mi}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: rel-shop, labels: ${labels}}
spec:
  rules:
  - host: shop.local
    http: {paths: [{path: /, pathType: ImplementationSpecific, backend: {service: {name: rel-shop, port: {number: 80}}}}]}
---
# Source: shop/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: rel-shop, labels: ${labels}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: rel-shop}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: rel-shop, labels: ${labels}}
spec: {maxUnavailable: 1, selector: {matchLabels: ${labels}}}
`;

describe('a Helm-rendered chart with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('applies client-side, then server-side twice without a change', async () => {
    const csa = await ctx.k.ok(['apply', '-f', '-'], CHART);
    assert.match(csa, /deployment.apps\/rel-shop created/);
    assert.match(csa, /ingress.networking.k8s.io\/rel-shop created/);
    assert.match(csa, /horizontalpodautoscaler.autoscaling\/rel-shop created/);
    const again = await ctx.k.ok(['apply', '-f', '-'], CHART);
    assert.match(again, /deployment.apps\/rel-shop unchanged/);
    assert.match(again, /service\/rel-shop unchanged/);
    assert.match(again, /horizontalpodautoscaler.autoscaling\/rel-shop unchanged/);
    await ctx.k.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], CHART);
    const deploy = '/apis/apps/v1/namespaces/default/deployments/rel-shop';
    const before = (await ctx.s.admin.request('GET', deploy)).json;
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], CHART);
    const after = (await ctx.s.admin.request('GET', deploy)).json;
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.metadata.generation, 1);
    const probe = after.spec.template.spec.containers[0].livenessProbe;
    assert.deepEqual(probe, {
      httpGet: { path: '/', port: 'http', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    const hpa = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/rel-shop';
    const hpaBefore = (await ctx.s.admin.request('GET', hpa)).json;
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], CHART);
    assert.equal((await ctx.s.admin.request('GET', hpa)).json.metadata.resourceVersion, hpaBefore.metadata.resourceVersion);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], CHART);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    const clientDiff = await ctx.k.run(['diff', '-f', '-'], CHART);
    assert.equal(clientDiff.code, 0, clientDiff.stdout + clientDiff.stderr);
  });

  it('explains the new kinds from the published schema', async () => {
    const out = await ctx.k.ok(['explain', 'deployment.spec.strategy']);
    assert.match(out, /GROUP:\s+apps/);
    assert.match(out, /rollingUpdate\s+<RollingUpdateDeployment>/);
    assert.match(await ctx.k.ok(['explain', 'cronjob.spec.jobTemplate']), /KIND:\s+CronJob/);
  });
});
