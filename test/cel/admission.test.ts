// The admission CEL environment (lib/cel/admission.ts) and the authorizer
// library (lib/cel/authz.ts): declarations per configuration, kube's compile
// messages and result types, the request variable, and authorizer checks
// answered by a real (async) authorizer across evaluation rounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuthorizationAttributes, Decision } from '../../lib/api/authorization.js';
import {
  compileAdmission,
  jsonValue,
  requestAuthorizer,
  requestValue,
  RETURNS_BOOL,
  RETURNS_STRING,
  RETURNS_STRING_OR_NULL,
  type AdmissionDeclarations,
  type AdmissionRequestInput,
} from '../../lib/cel/admission.js';
import { AuthorizerSession } from '../../lib/cel/authz.js';
import { CelEvalError, type CelValue } from '../../lib/cel/index.js';
import { INT, STRING } from '../../lib/cel/types.js';

const ALL: AdmissionDeclarations = { params: true, authorizer: true, variables: true };
const NONE: AdmissionDeclarations = { params: false, authorizer: false, variables: false };

const error = (expr: string, d = ALL, returns = RETURNS_BOOL) => {
  const r = compileAdmission(expr, d, returns);
  return 'error' in r ? r.error : 'ok';
};

const REQ: AdmissionRequestInput = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  subResource: '',
  name: 'web',
  namespace: 'team-a',
  operation: 'CREATE',
  userInfo: { username: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'] },
  dryRun: false,
  options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl' },
};

const bindings = (object: unknown) => ({
  object: jsonValue(object),
  oldObject: null,
  request: requestValue(REQ),
  namespaceObject: null,
  params: null,
  variables: new Map(),
  authorizer: requestAuthorizer(REQ),
});

/** An authorizer that allows what `allow` says and counts its calls. */
function authorizer(allow: (a: AuthorizationAttributes) => Decision) {
  const calls: AuthorizationAttributes[] = [];
  return {
    calls,
    authorize: async (a: AuthorizationAttributes) => {
      calls.push(a);
      await new Promise((r) => setImmediate(r));
      return allow(a);
    },
  };
}

function evaluate(expr: string, object: unknown, session: AuthorizerSession): Promise<CelValue | string> {
  const c = compileAdmission(expr, ALL, 'any');
  if ('error' in c) throw new Error(c.error);
  return session.run(() => {
    try {
      return c.compiled.evaluate(bindings(object));
    } catch (err) {
      if (err instanceof CelEvalError) return `error: ${err.detail}`;
      throw err;
    }
  });
}

test('variables are declared only as the configuration has them, with cel-go’s messages', () => {
  assert.equal(
    error('params.max > 1', NONE),
    "compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.max > 1\n | ^",
  );
  assert.equal(
    error('authorizer != null', NONE).split('\n')[0],
    "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')",
  );
  assert.equal(error('variables.a', NONE).split('\n')[0], "compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')");
  assert.equal(error('params.max > 1 && object.spec.replicas < 3'), 'ok');
  assert.equal(error('request.nope == 1'), "compilation failed: ERROR: <input>:1:8: undefined field 'nope'\n | request.nope == 1\n | .......^");
  assert.equal(error('namespaceObject.metadata.labels["a"] == "b" && request.userInfo.groups.exists(g, g == "x")'), 'ok');
});

test('result types are checked as kube checks them', () => {
  assert.equal(error('object.spec.paused'), 'must evaluate to bool but got dyn');
  assert.equal(error('1'), 'must evaluate to bool but got int');
  assert.equal(error("'x'", ALL, RETURNS_STRING), 'ok');
  assert.equal(error('1', ALL, RETURNS_STRING), 'must evaluate to string but got int');
  assert.equal(error('null', ALL, RETURNS_STRING_OR_NULL), 'ok');
  assert.equal(error('true', ALL, RETURNS_STRING_OR_NULL), 'must evaluate to one of [string null_type] but got bool');
  assert.equal(error("authorizer.requestResource.check('get').reason()"), 'must evaluate to bool but got string');
  assert.equal(
    error("authorizer.group('').check('get').allowed()").split('\n')[0],
    "compilation failed: ERROR: <input>:1:27: found no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.(string)'",
  );
});

test('variables are typed as the earlier variables evaluate', () => {
  const types = { variables: new Map([['n', INT]]) };
  const r = compileAdmission('variables.n + 1 > 2', ALL, RETURNS_BOOL, types);
  assert.ok('compiled' in r);
  const bad = compileAdmission('variables.m > 2', ALL, RETURNS_BOOL, types);
  assert.ok('error' in bad && bad.error.includes("undefined field 'm'"));
  const s = compileAdmission("variables.n + 'x' == 'y'", ALL, RETURNS_BOOL, { variables: new Map([['n', STRING]]) });
  assert.ok('compiled' in s);
});

test('the request variable and integer object fields as kube sees them', async () => {
  const session = new AuthorizerSession(
    authorizer(() => ({ kind: 'deny', reason: '' })),
    REQ.userInfo,
  );
  assert.equal(await evaluate('object.spec.replicas + 1', { spec: { replicas: 2 } }, session), 3n);
  assert.equal(
    await evaluate("request.userInfo.username + '/' + request.operation + '/' + request.resource.resource + '/' + request.kind.kind", {}, session),
    'alice/CREATE/deployments/Deployment',
  );
  assert.equal(await evaluate('request.requestKind.group == "apps" && request.options.fieldManager == "kubectl" && !request.dryRun', {}, session), true);
  assert.equal(await evaluate('has(request.subResource)', {}, session), false);
  assert.equal(await evaluate('object["__proto__"].x', JSON.parse('{"__proto__": {"x": 1}}'), session), 1n);
});

test('authorizer checks are asked of the authorizer, as the requester or a service account', async () => {
  const a = authorizer((x) => ({
    kind: x.user.username === 'alice' && x.resource === 'deployments' && x.namespace === 'team-a' ? 'allow' : 'no-opinion',
    reason: `asked ${x.verb}`,
  }));
  const session = new AuthorizerSession(a, REQ.userInfo);
  assert.equal(await evaluate("authorizer.requestResource.check('update').allowed()", {}, session), true);
  assert.deepEqual(
    { ...a.calls[0]!, user: a.calls[0]!.user.username },
    {
      verb: 'update',
      isResourceRequest: true,
      path: '',
      apiGroup: 'apps',
      apiVersion: '*',
      namespace: 'team-a',
      resource: 'deployments',
      subresource: '',
      name: 'web',
      user: 'alice',
    },
  );
  assert.equal(await evaluate("authorizer.group('apps').resource('deployments').namespace('other').check('get').allowed()", {}, session), false);
  assert.equal(await evaluate("authorizer.group('apps').resource('deployments').namespace('team-a').check('get').reason()", {}, session), 'asked get');
  assert.equal(
    await evaluate(
      "authorizer.serviceAccount('team-a', 'builder').group('apps').resource('deployments').namespace('team-a').check('get').allowed()",
      {},
      session,
    ),
    false,
  );
  const sa = a.calls.at(-1)!.user;
  assert.deepEqual(sa, { username: 'system:serviceaccount:team-a:builder', uid: '', groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a'] });
  assert.equal(await evaluate("authorizer.path('/healthz').check('get').allowed()", {}, session), false);
  assert.equal(a.calls.at(-1)!.path, '/healthz');
  assert.equal(a.calls.at(-1)!.isResourceRequest, false);
});

test('fieldSelector and labelSelector reach the authorizer as parsed requirements; one that does not parse is left out', async () => {
  const a = authorizer(() => ({ kind: 'allow', reason: '' }));
  const session = new AuthorizerSession(a, REQ.userInfo);
  assert.equal(
    await evaluate(
      "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app in (a,b)').check('list').allowed()",
      {},
      session,
    ),
    true,
  );
  const x = a.calls[0] as AuthorizationAttributes & { fieldSelector?: unknown; labelSelector?: Array<{ key: string }> };
  assert.deepEqual(x.fieldSelector, [{ field: 'spec.nodeName', operator: '=', value: 'n1' }]);
  assert.deepEqual(
    x.labelSelector?.map((r) => r.key),
    ['app'],
  );
  assert.equal(await evaluate("authorizer.group('').resource('pods').fieldSelector('bad selector').check('list').allowed()", {}, session), true);
  assert.equal((a.calls[1] as { fieldSelector?: unknown }).fieldSelector, undefined);
});

test('a check that depends on another decision takes one more round; decisions are kept per session', async () => {
  const a = authorizer((x) => ({ kind: x.verb === 'get' || x.namespace === 'two' ? 'allow' : 'deny', reason: '' }));
  const session = new AuthorizerSession(a, REQ.userInfo);
  const expr = "authorizer.group('').resource('pods').namespace(authorizer.requestResource.check('get').allowed() ? 'two' : 'one').check('list').allowed()";
  assert.equal(await evaluate(expr, {}, session), true);
  assert.equal(a.calls.length, 2);
  assert.equal(await evaluate(expr, {}, session), true);
  assert.equal(a.calls.length, 2, 'answered from the session');
});

test('errors: a failing authorizer is an errored decision; bad builder arguments fail as kube', async () => {
  const session = new AuthorizerSession(
    {
      authorize: async () => {
        throw new Error('webhook unreachable');
      },
    },
    REQ.userInfo,
  );
  assert.equal(await evaluate("authorizer.requestResource.check('get').errored()", {}, session), true);
  assert.equal(await evaluate("authorizer.requestResource.check('get').error()", {}, session), 'webhook unreachable');
  assert.equal(await evaluate("authorizer.requestResource.check('get').allowed()", {}, session), false);
  assert.equal(await evaluate("authorizer.path(' ').check('get').allowed()", {}, session), 'error: path must not be empty');
  assert.equal(await evaluate("authorizer.group('').resource('').check('get').allowed()", {}, session), 'error: resource must not be empty');
  assert.equal(
    await evaluate("authorizer.serviceAccount('ns', 'Bad_Name').path('/x').check('get').allowed()", {}, session),
    'error: Invalid service account name',
  );
  assert.equal(
    await evaluate("authorizer.serviceAccount('Bad.NS', 'ok').path('/x').check('get').allowed()", {}, session),
    'error: Invalid service account namespace',
  );
});

test('an authorization check costs 350000: three in one expression pass the per-call limit', async () => {
  const session = new AuthorizerSession(
    authorizer(() => ({ kind: 'allow', reason: '' })),
    REQ.userInfo,
  );
  const two = "authorizer.requestResource.check('a').allowed() && authorizer.requestResource.check('b').allowed()";
  assert.equal(await evaluate(two, {}, session), true);
  const three = `${two} && authorizer.requestResource.check('c').allowed()`;
  assert.match(String(await evaluate(three, {}, session)), /^error: operation cancelled: actual cost limit exceeded/);
});
