// The route table's matching, one table of paths per form, and what it
// refuses: the forms' edges (whole segments for prefixes, one segment for
// `*` and captures, `/**` for the rest, regexes over the whole path), the
// captures as resource attributes, and client-shaped keys as data.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRouteTable } from '../../gateway/routes/table.js';
import { routeAttributes } from '../../gateway/routes/attributes.js';

const opts = { upstreams: false, upstreamUrl: (u: string) => u };
const table = (routes: unknown[]) => parseRouteTable({ routes }, opts);
const USER = { username: 'u', groups: [] };

describe('route matching', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, boolean>]> = [
    ['exact path', { path: '/metrics' }, { '/metrics': true, '/metrics/': false, '/metrics/x': false, '/metricsx': false }],
    ['prefix, whole segments', { prefix: '/api' }, { '/api': true, '/api/': true, '/api/v1/x': true, '/apis': false, '/': false }],
    ['root prefix', { prefix: '/' }, { '/': true, '/anything/at/all': true }],
    ['pattern * is one segment', { pattern: '/api/v1/*' }, { '/api/v1/pods': true, '/api/v1/pods/x': false, '/api/v1/': true, '/api/v1': false }],
    ['pattern * inside a segment', { pattern: '/metrics*' }, { '/metrics': true, '/metrics-x': true, '/metrics/x': false }],
    ['pattern /** is the rest', { pattern: '/static/**' }, { '/static': true, '/static/a/b/c': true, '/staticx': false }],
    ['pattern literal dots', { pattern: '/a.b' }, { '/a.b': true, '/axb': false }],
    ['regex over the whole path', { regex: '/v[0-9]+/x' }, { '/v1/x': true, '/v12/x': true, '/pre/v1/x': false, '/v1/x/post': false }],
  ];
  for (const [what, spec, paths] of cases) {
    it(what, () => {
      const t = table([{ name: 'r', ...spec }]);
      for (const [path, hit] of Object.entries(paths)) assert.equal(t.match(path) !== undefined, hit, `${what}: ${path}`);
    });
  }

  it('first match wins', () => {
    const t = table([
      { name: 'one', path: '/api/v1/pods' },
      { name: 'all', prefix: '/api' },
    ]);
    assert.equal(t.match('/api/v1/pods')!.route.name, 'one');
    assert.equal(t.match('/api/v1/nodes')!.route.name, 'all');
  });

  it('captures fill resource attributes, by field name or by template', () => {
    const t = table([
      { name: 'p', pattern: '/ns/{namespace}/{kind}/{name}', resourceAttributes: { resource: '{kind}s', apiGroup: 'apps' } },
      { name: 'r', regex: '/x/(?<namespace>[a-z]+)/(?<resource>[a-z]+)', resourceAttributes: {} },
    ]);
    const a = routeAttributes(t.match('/ns/team/deployment/web')!, USER, 'DELETE', '/ns/team/deployment/web');
    assert.deepEqual(
      { verb: a.verb, isResourceRequest: a.isResourceRequest, namespace: a.namespace, resource: a.resource, apiGroup: a.apiGroup, name: a.name },
      { verb: 'delete', isResourceRequest: true, namespace: 'team', resource: 'deployments', apiGroup: 'apps', name: 'web' },
    );
    const b = routeAttributes(t.match('/x/prod/secrets')!, USER, 'GET', '/x/prod/secrets');
    assert.equal(b.namespace, 'prod');
    assert.equal(b.resource, 'secrets');
  });

  it('a route without resourceAttributes asks about the path and the verb', () => {
    const a = routeAttributes(table([{ name: 'n', prefix: '/' }]).match('/healthz')!, USER, 'POST', '/healthz');
    assert.equal(a.isResourceRequest, false);
    assert.equal(a.path, '/healthz');
    assert.equal(a.verb, 'create');
  });
});

describe('route tables refused, naming the route', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['empty', { routes: [] }, /routes must be a non-empty list/],
    [
      'a __proto__ key is a field like any other',
      JSON.parse('{"routes":[{"name":"x","prefix":"/","__proto__":{"action":"ignore"}}]}'),
      /routes\[0\] "x": unknown field __proto__/,
    ],
    [
      'a name twice',
      {
        routes: [
          { name: 'a', path: '/a' },
          { name: 'a', path: '/b' },
        ],
      },
      /routes\[1\] "a": name is used by an earlier route/,
    ],
    [
      'an exact path an earlier pattern takes',
      {
        routes: [
          { name: 'p', pattern: '/a/*' },
          { name: 'e', path: '/a/b' },
        ],
      },
      /routes\[1\] "e": never matches: route "p"/,
    ],
    [
      'the same regex twice',
      {
        routes: [
          { name: 'r1', regex: '/x.*' },
          { name: 'r2', regex: '/x.*' },
        ],
      },
      /routes\[1\] "r2": never matches/,
    ],
    ['a dot segment', { routes: [{ name: 'd', prefix: '/a/../b' }] }, /routes\[0\] "d": prefix: "\/a\/\.\.\/b": prefix must not hold dot segments/],
    ['** not last', { routes: [{ name: 's', pattern: '/a/**/b' }] }, /"\*\*" may only be the last segment/],
    ['a capture inside a segment', { routes: [{ name: 'c', pattern: '/a/x{id}' }] }, /a capture "\{name\}" must be a whole segment/],
    ['no resource', { routes: [{ name: 'n', prefix: '/', resourceAttributes: { namespace: 'x' } }] }, /resource is required/],
    [
      'attributes on a deny route',
      { routes: [{ name: 'd', prefix: '/', action: 'deny', resourceAttributes: { resource: 'pods' } }] },
      /a route with action deny asks nothing/,
    ],
    ['an unknown action', { routes: [{ name: 'a', prefix: '/', action: 'allow' }] }, /action must be one of authorize, ignore, deny/],
  ];
  for (const [what, doc, message] of cases) it(what, () => assert.throws(() => parseRouteTable(doc, opts), message));

  it('partial overlaps pass: first match wins is the point', () => {
    assert.doesNotThrow(() =>
      table([
        { name: 'exact', path: '/api/v1/pods' },
        { name: 'pattern', pattern: '/api/*/pods' },
        { name: 'prefix', prefix: '/api' },
        { name: 'later-prefix-outside', prefix: '/apis' },
      ]),
    );
  });
});
