// One process on the embedded file store: it takes the controllers' lease at
// start, even one its previous run (killed) still held; with
// --leader-elect=false there is no lease and the controllers run regardless.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from './helpers.js';
import { eventually } from '../helpers/eventually.js';

after(stopAll);

const ELECTION = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gatehouse-controllers';
const identityOf = (gh: Gatehouse) => /attempting to acquire leader lease \S+ as (\S+)/.exec(gh.proc.stdout + gh.proc.stderr)?.[1];

describe('leader election of a single process on the file store', () => {
  it('holds the lease once ready, and after a SIGKILL and restart takes it at once from its earlier run', async () => {
    const first = await startGatehouse();
    const lease = (await first.admin.request('GET', ELECTION)).json;
    assert.equal(lease.spec.holderIdentity, identityOf(first));
    assert.equal(lease.spec.leaseTransitions, 0);
    await first.crash();
    const second = await startGatehouse({ dataDir: first.dataDir });
    // Ready means the controllers' hooks passed: the first election attempt already decided, and won.
    const after = (await second.admin.request('GET', ELECTION)).json;
    assert.notEqual(identityOf(second), identityOf(first));
    assert.equal(after.spec.holderIdentity, identityOf(second));
    assert.equal(after.spec.leaseTransitions, 1);
    assert.match(second.proc.stdout + second.proc.stderr, /successfully acquired lease kube-system\/gatehouse-controllers/);
    await second.stop();
  });

  it('with --leader-elect=false keeps no lease and runs the controllers', async () => {
    const gh = await startGatehouse({ flags: ['--leader-elect=false'] });
    assert.equal((await gh.admin.request('GET', ELECTION)).status, 404);
    const live = await gh.admin.request('GET', '/livez?verbose');
    assert.doesNotMatch(live.text, /leaderElection/);
    assert.equal(
      (await gh.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'short-lived' } })).status,
      201,
    );
    assert.equal((await gh.admin.request('DELETE', '/api/v1/namespaces/short-lived')).status, 200);
    await eventually(
      'the namespace controller finishing the delete',
      async () => (await gh.admin.request('GET', '/api/v1/namespaces/short-lived')).status === 404,
    );
    await gh.stop();
  });
});
