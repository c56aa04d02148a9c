import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';

const cases: Array<[string, string, boolean, Partial<ReturnType<typeof parseRequestInfo>>]> = [
  ['GET', '/api/v1/namespaces', false, { verb: 'list', resource: 'namespaces', namespace: '', name: '' }],
  ['GET', '/api/v1/namespaces/team-a', false, { verb: 'get', resource: 'namespaces', namespace: 'team-a', name: 'team-a' }],
  ['PUT', '/api/v1/namespaces/team-a/finalize', false, { verb: 'update', resource: 'namespaces', name: 'team-a', subresource: 'finalize' }],
  ['PUT', '/api/v1/namespaces/team-a/status', false, { verb: 'update', resource: 'namespaces', name: 'team-a', subresource: 'status' }],
  ['GET', '/api/v1/namespaces/ns1/pods', false, { verb: 'list', resource: 'pods', namespace: 'ns1' }],
  ['GET', '/api/v1/namespaces/ns1/pods', true, { verb: 'watch', resource: 'pods', namespace: 'ns1' }],
  ['GET', '/api/v1/namespaces/ns1/pods/p1', true, { verb: 'watch', resource: 'pods', name: 'p1' }],
  ['GET', '/api/v1/watch/namespaces/ns1/pods', false, { verb: 'watch', resource: 'pods', namespace: 'ns1' }],
  ['GET', '/api/v1/pods', false, { verb: 'list', resource: 'pods', namespace: '' }],
  ['POST', '/api/v1/namespaces/ns1/pods', false, { verb: 'create', resource: 'pods' }],
  ['DELETE', '/api/v1/namespaces/ns1/pods', false, { verb: 'deletecollection', resource: 'pods' }],
  ['DELETE', '/api/v1/namespaces/ns1/pods/p1', false, { verb: 'delete', name: 'p1' }],
  [
    'PATCH',
    '/apis/apps/v1/namespaces/ns1/deployments/d1/scale',
    false,
    { verb: 'patch', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', subresource: 'scale' },
  ],
  [
    'GET',
    '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin',
    false,
    { verb: 'get', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin' },
  ],
  ['GET', '/api/v1/namespaces/ns1/pods/p1/log/extra', false, { extraParts: 1 }],
];

test('resource paths parse into verb, group, version, namespace, resource, name and subresource', () => {
  for (const [method, path, watch, want] of cases) {
    const info = parseRequestInfo(method, path, watch);
    assert.equal(info.isResourceRequest, true, path);
    for (const [k, v] of Object.entries(want)) assert.equal(info[k as keyof typeof info], v, `${method} ${path} ${k}`);
  }
});

test('paths outside /api/<v> and /apis/<g>/<v> are non-resource requests with the lowercase method as verb', () => {
  for (const path of ['/', '/healthz', '/readyz/ping', '/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/openapi/v2']) {
    const info = parseRequestInfo('GET', path, false);
    assert.equal(info.isResourceRequest, false, path);
    assert.equal(info.verb, 'get');
  }
  assert.equal(parseRequestInfo('POST', '/api', false).verb, 'post');
});
