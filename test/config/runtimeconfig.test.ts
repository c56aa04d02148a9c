// --runtime-config: the grammar and its errors, kube's precedence, and a
// started server without the disabled versions and resources (absent from
// discovery, 404); deprecated versions answer with kube's Warning, the
// deprecated-API gauge and the audit annotations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { enabled, parseRuntimeConfig } from '../../gateway/config/runtimeconfig.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { deprecation } from '../../lib/registry/versions.js';
import { startTestServer } from '../helpers/server.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';

const type = (group: string, version: string, plural: string) => ({ group, version, plural });

describe('--runtime-config', () => {
  it('errors name the key: unknown group version, bad value, bad form, the core group off', () => {
    assert.throws(() => parseRuntimeConfig('widgets.example.com/v1=true'), /unknown group version "widgets.example.com\/v1"/);
    assert.throws(() => parseRuntimeConfig('coordination.k8s.io/v1=maybe'), /invalid value of coordination.k8s.io\/v1: maybe/);
    assert.throws(() => parseRuntimeConfig('a/b/c/d=true'), /must be api\/all/);
    assert.throws(() => parseRuntimeConfig('api/v1=false'), /core group \(v1\) cannot be disabled/);
    assert.throws(() => parseRuntimeConfig('v1/secrets=false'), /v1 secrets cannot be disabled/);
    const err = (argv: string[]) => {
      const r = parseServeFlags(argv);
      return 'error' in r ? r.error : '';
    };
    assert.match(err(['--runtime-config=flowcontrol.apiserver.k8s.io/v1=false']), /which --enable-priority-and-fairness \(on by default\) needs/);
    assert.equal(err(['--runtime-config=flowcontrol.apiserver.k8s.io/v1=false', '--enable-priority-and-fairness=false']), '');
    assert.match(err(['--runtime-config=api/all=false,v1=true']), /rbac.authorization.k8s.io\/v1, which --authorization-mode=RBAC needs/);
    assert.match(err(['--runtime-config=nope/v9']), /invalid value "nope\/v9" for --runtime-config: unknown group version/);
  });

  it('precedence: resource over group version over stability over api/all; alpha off by default', () => {
    const c = parseRuntimeConfig('api/all=false,api/beta=true,coordination.k8s.io/v1=true,v1/events=false');
    assert.equal(enabled(c, type('coordination.k8s.io', 'v1', 'leases')), true, 'group version beats api/all');
    assert.equal(enabled(c, type('rbac.authorization.k8s.io', 'v1', 'roles')), false, 'api/all=false');
    assert.equal(enabled(c, type('authentication.k8s.io', 'v1beta1', 'tokenreviews')), true, 'api/beta beats api/all');
    assert.equal(enabled(c, type('', 'v1', 'events')), false, 'a resource');
    const d = parseRuntimeConfig('');
    assert.equal(enabled(d, type('authentication.k8s.io', 'v1beta1', 'tokenreviews')), true);
    const later = parseRuntimeConfig('discovery.k8s.io/v1=false', parseRuntimeConfig('coordination.k8s.io/v1=false'));
    assert.equal(enabled(later, type('coordination.k8s.io', 'v1', 'leases')), false, 'a later --runtime-config adds to an earlier one');
    assert.equal(enabled(later, type('discovery.k8s.io', 'v1', 'endpointslices')), false);
  });

  it('a started server without coordination.k8s.io/v1 and v1 events: absent from discovery, 404', async () => {
    const s = await startTestServer({ flags: ['--runtime-config=coordination.k8s.io/v1=false,v1/events=false'] });
    try {
      const groups = (await s.admin.request('GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
      assert.equal(groups.includes('coordination.k8s.io'), false);
      assert.ok(groups.includes('rbac.authorization.k8s.io'));
      assert.equal((await s.admin.request('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases')).status, 404);
      const core = (await s.admin.request('GET', '/api/v1')).json.resources.map((r: { name: string }) => r.name);
      assert.equal(core.includes('events'), false);
      assert.ok(core.includes('configmaps'));
      assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/events')).status, 404);
      assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    } finally {
      await s.close();
    }
  });

  it('a resource rule naming no served type stops the start', async () => {
    await assert.rejects(startTestServer({ flags: ['--runtime-config=v1/nosuchthings=false'] }), /--runtime-config: unknown resource "v1\/nosuchthings"/);
  });
});

describe('deprecated versions', () => {
  it("answer with kube's Warning and set apiserver_requested_deprecated_apis", async () => {
    assert.equal(
      deprecation('authentication.k8s.io', 'v1beta1', 'TokenReview')?.text,
      'authentication.k8s.io/v1beta1 TokenReview is deprecated in v1.19+, unavailable in v1.22+; use authentication.k8s.io/v1 TokenReview',
    );
    assert.equal(deprecation('authentication.k8s.io', 'v1', 'TokenReview'), undefined);
    const s = await startTestServer();
    try {
      const r = await s.admin.request('POST', '/apis/authentication.k8s.io/v1beta1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1beta1',
        kind: 'TokenReview',
        spec: { token: 'nope' },
      });
      assert.equal(r.status, 201);
      assert.equal(
        r.headers['warning'],
        '299 - "authentication.k8s.io/v1beta1 TokenReview is deprecated in v1.19+, unavailable in v1.22+; use authentication.k8s.io/v1 TokenReview"',
      );
      const v1 = await s.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: 'nope' },
      });
      assert.equal(v1.headers['warning'], undefined);
      const m = parseMetrics((await s.admin.request('GET', '/metrics')).text);
      const g = samples(m, 'apiserver_requested_deprecated_apis', {
        group: 'authentication.k8s.io',
        version: 'v1beta1',
        resource: 'tokenreviews',
        removed_release: '1.22',
      });
      assert.equal(g.length, 1);
      assert.equal(Number(g[0]!.value), 1);
    } finally {
      await s.close();
    }
  });
});
