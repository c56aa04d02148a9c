// scheduling.k8s.io/v1 PriorityClasses through kubectl against a started
// server: kube's two system classes exist once the server is ready, `kubectl
// get pc` columns, the preemption policy default, and the validation kube
// applies to reserved names, user values and updates.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

const PC = '/apis/scheduling.k8s.io/v1/priorityclasses';

describe('scheduling.k8s.io/v1 PriorityClasses with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('serves the two system classes with kube columns', async () => {
    const node = (await ctx.s.admin.request('GET', `${PC}/system-node-critical`)).json;
    assert.equal(node.value, 2000001000);
    assert.equal(node.preemptionPolicy, 'PreemptLowerPriority');
    assert.equal(node.description, 'Used for system critical pods that must not be moved from their current node.');
    const out = await ctx.k.ok(['get', 'pc']);
    const lines = out.trim().split('\n');
    assert.deepEqual(lines[0]!.trim().split(/\s{2,}/), ['NAME', 'VALUE', 'GLOBAL-DEFAULT', 'AGE', 'PREEMPTIONPOLICY']);
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!.split(/\s+/);
    assert.deepEqual(
      row('system-cluster-critical').filter((_, i) => i !== 3),
      ['system-cluster-critical', '2000000000', 'false', 'PreemptLowerPriority'],
    );
    assert.deepEqual(
      row('system-node-critical').filter((_, i) => i !== 3),
      ['system-node-critical', '2000001000', 'false', 'PreemptLowerPriority'],
    );
  });

  it('creates user classes with defaults and refuses what kube refuses', async () => {
    assert.match(
      await ctx.k.ok(['create', 'priorityclass', 'batch-low', '--value=100', '--description=low']),
      /priorityclass.scheduling.k8s.io\/batch-low created/,
    );
    const pc = (await ctx.s.admin.request('GET', `${PC}/batch-low`)).json;
    assert.equal(pc.preemptionPolicy, 'PreemptLowerPriority');
    const reserved = await ctx.k.run(['create', 'priorityclass', 'system-mine', '--value=5']);
    assert.match(
      reserved.stderr,
      /metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class/,
    );
    const high = await ctx.k.run(['create', 'priorityclass', 'too-high', '--value=1000000001']);
    assert.match(high.stderr, /value: Forbidden: maximum allowed value of a user defined priority is 1000000000/);
    const change = await ctx.k.run(['patch', 'pc', 'batch-low', '--type=merge', '-p', '{"value":200,"preemptionPolicy":"Never"}']);
    assert.match(change.stderr, /value: Forbidden: may not be changed in an update./);
    assert.match(change.stderr, /preemptionPolicy: Invalid value: "Never": field is immutable/);
    await ctx.k.ok(['patch', 'pc', 'batch-low', '--type=json', '-p', '[{"op":"replace","path":"/description","value":"lower"}]']);
    assert.equal((await ctx.s.admin.request('GET', `${PC}/batch-low`)).json.description, 'lower');
    await ctx.k.ok(['delete', 'pc', 'batch-low']);
  });
});
