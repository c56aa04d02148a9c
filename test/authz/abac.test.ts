// ABAC policy files: kube's line format, matching rules, and errors naming the line.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AbacAuthorizer, loadAbac, parsePolicyFile } from '../../gateway/authz/abac.js';
import type { Attributes } from '../../gateway/authz/types.js';
import { startTestServer } from '../helpers/server.js';

const V = 'abac.authorization.kubernetes.io/v1beta1';
const policy = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: V, kind: 'Policy', spec });

const FILE = [
  '# kube-apiserver examples',
  policy({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
  policy({ user: 'kubelet', namespace: '*', resource: 'pods', readonly: true }),
  policy({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', apiGroup: '', readonly: true }),
  policy({ group: 'ops', namespace: '*', resource: 'deployments', apiGroup: 'apps' }),
  policy({ user: '*', nonResourcePath: '/version', readonly: true }),
  policy({ group: 'system:unauthenticated', nonResourcePath: '/healthz/*', readonly: true }),
  policy({ user: 'carol', nonResourcePath: '*' }),
  '',
  '{"user":"legacy","readonly":true}',
  '{"user":"legacy2","namespace":"ns1","resource":"secrets"}',
].join('\n');

function attrs(user: string, groups: string[], over: Partial<Attributes>): Attributes {
  return {
    user: { username: user, groups },
    verb: 'get',
    isResourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'default',
    resource: 'pods',
    subresource: '',
    name: '',
    ...over,
  };
}

describe('ABAC', () => {
  const authz = new AbacAuthorizer(parsePolicyFile(FILE));
  const authed = ['system:authenticated'];
  const matrix: Array<[string, string, string[], Partial<Attributes>, 'allow' | 'no-opinion']> = [
    ['a user with everything may delete anywhere', 'alice', authed, { verb: 'delete', namespace: 'kube-system', resource: 'secrets' }, 'allow'],
    ['that user has no non-resource path', 'alice', authed, { isResourceRequest: false, path: '/version', resource: '' }, 'allow'],
    ['a read-only policy allows list', 'kubelet', authed, { verb: 'list' }, 'allow'],
    ['a read-only policy refuses create', 'kubelet', authed, { verb: 'create' }, 'no-opinion'],
    ['a read-only policy applies to its resource only', 'kubelet', authed, { resource: 'secrets' }, 'no-opinion'],
    ['a namespaced policy allows its namespace', 'bob', authed, { namespace: 'projectCaribou' }, 'allow'],
    ['a namespaced policy refuses another namespace', 'bob', authed, { namespace: 'default' }, 'no-opinion'],
    ['a namespaced policy refuses cluster scope', 'bob', authed, { namespace: '' }, 'no-opinion'],
    ['an empty apiGroup means the core group only', 'bob', authed, { namespace: 'projectCaribou', apiGroup: 'apps' }, 'no-opinion'],
    ['a group policy matches members', 'dave', ['ops', ...authed], { verb: 'update', apiGroup: 'apps', resource: 'deployments' }, 'allow'],
    ['a group policy refuses others', 'dave', authed, { verb: 'update', apiGroup: 'apps', resource: 'deployments' }, 'no-opinion'],
    ['user * means every authenticated user', 'eve', authed, { isResourceRequest: false, path: '/version', resource: '' }, 'allow'],
    [
      'user * does not match anonymous users',
      'system:anonymous',
      ['system:unauthenticated'],
      { isResourceRequest: false, path: '/version', resource: '' },
      'no-opinion',
    ],
    [
      'a path with /* matches below it',
      'system:anonymous',
      ['system:unauthenticated'],
      { isResourceRequest: false, path: '/healthz/ping', resource: '' },
      'allow',
    ],
    ['a non-resource policy never matches resources', 'carol', authed, {}, 'no-opinion'],
    ['nonResourcePath * matches every path', 'carol', authed, { isResourceRequest: false, path: '/metrics', verb: 'post', resource: '' }, 'allow'],
    ['a legacy policy without resource matches everything read-only', 'legacy', authed, { resource: 'secrets', apiGroup: 'apps' }, 'allow'],
    ['a legacy policy without resource matches paths', 'legacy', authed, { isResourceRequest: false, path: '/anything', resource: '' }, 'allow'],
    ['a legacy read-only policy refuses writes', 'legacy', authed, { verb: 'patch' }, 'no-opinion'],
    ['a legacy policy with resource and namespace is limited to them', 'legacy2', authed, { namespace: 'ns1', resource: 'secrets', verb: 'delete' }, 'allow'],
    ['a legacy limited policy refuses other namespaces', 'legacy2', authed, { namespace: 'ns2', resource: 'secrets' }, 'no-opinion'],
    ['nobody matched gives no opinion', 'mallory', authed, {}, 'no-opinion'],
  ];
  for (const [name, user, groups, over, want] of matrix) {
    it(name, () => assert.equal(authz.authorize(attrs(user, groups, over)).kind, want));
  }

  const bad: Array<[string, string]> = [
    ['{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"a","resorce":"pods"}}', 'line 2: spec.resorce: unknown field'],
    ['{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"readonly":"yes"}}', 'line 2: spec.readonly: must be a boolean'],
    [
      '{"apiVersion":"abac.authorization.kubernetes.io/v2","kind":"Policy","spec":{}}',
      'line 2: apiVersion: unsupported value "abac.authorization.kubernetes.io/v2" (want "abac.authorization.kubernetes.io/v1beta1" or none)',
    ],
    ['{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":7}}', 'line 2: spec.user: must be a string'],
    ['not json', 'line 2: not a JSON object: '],
    ['[1]', 'line 2: not a JSON object'],
  ];
  for (const [line, message] of bad) {
    it(`names the line of a bad policy: ${message}`, () => {
      assert.throws(
        () => parsePolicyFile(`# ok\n${line}\n`),
        (err: Error) => err.message.startsWith(message),
      );
    });
  }

  it('a bad policy file stops the server with a one-line error naming the flag and the line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-abac-'));
    const file = join(dir, 'policy.jsonl');
    await writeFile(file, `${policy({ user: 'a', namespace: '*', resource: '*', apiGroup: '*' })}\n\n{"user": }\n`);
    try {
      await assert.rejects(
        loadAbac(file),
        (err: Error) =>
          err.message.startsWith(`invalid value "${file}" for --authorization-policy-file: line 3: not a JSON object`) && !err.message.includes('\n'),
      );
      await assert.rejects(startTestServer({ flags: ['--authorization-mode=ABAC', `--authorization-policy-file=${file}`] }), /line 3: not a JSON object/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a server with ABAC answers by the policy file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-abac-'));
    const file = join(dir, 'policy.jsonl');
    await writeFile(file, `${policy({ group: 'system:unauthenticated', nonResourcePath: '/version', readonly: true })}\n`);
    const srv = await startTestServer({ flags: ['--authorization-mode=ABAC', `--authorization-policy-file=${file}`] });
    try {
      assert.equal((await srv.anonymous.request('GET', '/version')).status, 200);
      const r = await srv.anonymous.request('GET', '/api/v1/namespaces');
      assert.equal(r.status, 403);
      assert.match(r.json.message, /No policy matched/);
    } finally {
      await srv.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
