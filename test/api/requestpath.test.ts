import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkedRequestPath } from '../../lib/api/requestpath.js';
import { StatusError } from '../../lib/api/status.js';

test('clean paths are accepted and decoded once', () => {
  assert.equal(checkedRequestPath('/'), '/');
  assert.equal(checkedRequestPath('/api/v1/namespaces/'), '/api/v1/namespaces/');
  assert.equal(
    checkedRequestPath('/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aauth-delegator'),
    '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:auth-delegator',
  );
  assert.equal(checkedRequestPath('/api/v1/namespaces/a.b/configmaps/..x'), '/api/v1/namespaces/a.b/configmaps/..x');
});

test('paths a backend could read as another path are refused with a 400 naming the path and the reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['/a/../b', /dot segments/],
    ['/a/./b', /dot segments/],
    ['/a/..', /dot segments/],
    ['/a/%2e%2E/b', /dot segments/],
    ['/a/.%2e', /dot segments/],
    ['/a//b', /empty path segments/],
    ['//a', /empty path segments/],
    ['/a%2Fb', /encoded "\/"/],
    ['/a%5cb', /encoded "\\"/],
    ['/a%252e', /encoded "%"/],
    ['/a%3Bb', /encoded ";"/],
    ['/a;x=y', /";"/],
    ['/a\\b', /"\\"/],
    ['/a%00', /control/],
    ['/a%0a', /control/],
    ['/a\tb', /control/],
    ['/a%zz', /hexadecimal/],
    ['/a%2', /hexadecimal/],
    ['/a%C0%AE', /UTF-8/],
    ['https://evil/api', /beginning with "\/"/],
    ['*', /beginning with "\/"/],
    ['', /beginning with "\/"/],
  ];
  for (const [path, why] of cases) {
    assert.throws(
      () => checkedRequestPath(path),
      (e: unknown) => {
        assert.ok(e instanceof StatusError, path);
        assert.equal(e.code, 400, path);
        assert.match(e.message, /^invalid request path "/, path);
        assert.match(e.message, why, path);
        return true;
      },
    );
  }
});

test('a long hostile path is not echoed whole', () => {
  const long = `/a/${'x'.repeat(65536)}/../b`;
  assert.throws(
    () => checkedRequestPath(long),
    (e: unknown) => e instanceof StatusError && e.message.length < 400,
  );
});
