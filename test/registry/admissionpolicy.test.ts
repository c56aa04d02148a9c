// ValidatingAdmissionPolicy and binding defaults and validation
// (lib/registry/builtins/admissionpolicy-validation.ts): kube's field paths
// and messages, CEL compiled at write in the environment each expression
// runs in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { validatingadmissionpolicies as vap, validatingadmissionpolicybindings as vapb } from '../../lib/registry/builtins/admissionregistration-policies.js';

const RULES = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }];

function policy(spec: Record<string, unknown>): KObject {
  const o = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p.example.com' },
    spec: { matchConstraints: { resourceRules: RULES }, ...spec },
  } as KObject;
  vap.defaults!(o);
  return o;
}
const errors = (o: KObject, t = vap) => t.validate!(o, undefined).map((c) => `${c.field}: ${c.message}`);

test('defaults as kube v1: failurePolicy Fail, matchPolicy Equivalent, empty selectors, scope *', () => {
  const o = policy({ validations: [{ expression: 'true' }] });
  assert.deepEqual(o['spec'], {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [{ ...RULES[0], scope: '*' }], matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} },
    validations: [{ expression: 'true' }],
  });
  assert.deepEqual(errors(o), []);
});

test('expressions are compiled in their own environments', () => {
  assert.deepEqual(errors(policy({ validations: [{ expression: 'params.x == 1' }] })), [
    "spec.validations[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
  ]);
  assert.deepEqual(errors(policy({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'params.x == 1' }] })), []);
  assert.deepEqual(errors(policy({ validations: [{ expression: 'object.spec.paused' }] })), [
    'spec.validations[0].expression: Invalid value: "object.spec.paused": must evaluate to bool but got dyn',
  ]);
  // message expressions have no authorizer; variables are typed in order
  const e = errors(
    policy({
      variables: [
        { name: 'n', expression: 'size(object.data)' },
        { name: 'ok', expression: 'variables.n < 3' },
      ],
      validations: [
        { expression: 'variables.ok', messageExpression: "authorizer.path('/x').check('get').reason()" },
        { expression: 'variables.n', messageExpression: "'n is ' + string(variables.n)" },
      ],
    }),
  );
  assert.equal(e.length, 2);
  assert.match(e[0]!, /^spec\.validations\[0\]\.messageExpression: Invalid value: .*undeclared reference to 'authorizer'/);
  assert.equal(e[1], 'spec.validations[1].expression: Invalid value: "variables.n": must evaluate to bool but got int');
  assert.deepEqual(errors(policy({ validations: [{ expression: 'variables.a' }] })).length, 1, 'no variables declared without spec.variables');
  assert.deepEqual(errors(policy({ auditAnnotations: [{ key: 'k', valueExpression: '1' }] })), [
    'spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of [string null_type] but got int',
  ]);
  assert.deepEqual(
    errors(
      policy({
        matchConditions: [{ name: 'm', expression: 'variables.x' }],
        variables: [{ name: 'x', expression: 'true' }],
        validations: [{ expression: 'true' }],
      }),
    ).length,
    1,
  );
});

test('the spec’s structure is checked with kube’s paths', () => {
  const o = policy({ failurePolicy: 'Sometimes', validations: [], auditAnnotations: [] });
  (o['spec'] as Record<string, unknown>)['matchConstraints'] = {
    resourceRules: [{ apiGroups: ['*', 'apps'], apiVersions: [], operations: ['EAT'], resources: [] }],
    matchPolicy: 'Equivalent',
    namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] },
    objectSelector: {},
  };
  assert.deepEqual(errors(o), [
    'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
    "spec.matchConstraints.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "EAT": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups',
    'spec.matchConstraints.resourceRules[0].apiVersions: Required value',
    'spec.matchConstraints.resourceRules[0].resources: Required value',
    'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
  ]);
});

test('bindings: paramRef, validation actions, policy name', () => {
  const b = (spec: Record<string, unknown>) => {
    const o = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec } as KObject;
    vapb.defaults!(o);
    return errors(o, vapb);
  };
  assert.deepEqual(b({ policyName: 'p', validationActions: ['Deny'] }), []);
  assert.deepEqual(b({ policyName: 'p', validationActions: ['Deny', 'Warn', 'Deny'], paramRef: { name: 'a', selector: {} } }), [
    'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
    'spec.validationActions[2]: Duplicate value: "Deny"',
    'spec.validationActions: Invalid value: []string{"Deny", "Warn", "Deny"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  assert.deepEqual(b({ validationActions: [], paramRef: {} }), [
    'spec.policyName: Required value',
    'spec.paramRef: Required value: one of name or selector must be specified',
    'spec.validationActions: Required value: at least one validation action is required',
  ]);
});
