// One policy evaluated on its own (backends/core/admission/policies/evaluate.ts):
// match conditions (false wins over errors), variables evaluated lazily and
// once, the per-call limit and the per-evaluation budget, failurePolicy on
// evaluation errors, audit annotation values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { jsonValue } from '../../lib/cel/admission.js';
import { compilePolicy } from '../../backends/core/admission/policies/compiled.js';
import { evaluatePolicy } from '../../backends/core/admission/policies/evaluate.js';

function policy(spec: Record<string, unknown>): ReturnType<typeof compilePolicy> {
  return compilePolicy({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p' },
    spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: [] }, ...spec },
  } as KObject);
}

const inputs = (object: unknown) => ({
  object: jsonValue(object),
  oldObject: null,
  request: jsonValue({ operation: 'CREATE' }),
  namespaceObject: null,
  authorizer: null,
});
const summary = (r: ReturnType<typeof evaluatePolicy>) => r.decisions.map((d) => `${d.action}/${d.evaluation}/${d.errorType}: ${d.message}`);

test('match conditions: any false skips the policy, even beside an error; an error alone fails by failurePolicy', () => {
  const p = (fp: string) =>
    policy({
      failurePolicy: fp,
      matchConditions: [
        { name: 'a', expression: 'object.x == 1' },
        { name: 'b', expression: 'object.flag == true' },
      ],
      validations: [{ expression: 'false', message: 'denied' }],
    });
  assert.deepEqual(summary(evaluatePolicy(p('Fail'), inputs({ flag: false }))), [], 'false wins over the error of a');
  assert.deepEqual(summary(evaluatePolicy(p('Fail'), inputs({ flag: true }))), [
    "deny/error/invalid_error: expression 'object.x == 1' resulted in error: no such key: x",
  ]);
  assert.deepEqual(summary(evaluatePolicy(p('Ignore'), inputs({ flag: true }))), []);
  assert.deepEqual(summary(evaluatePolicy(p('Fail'), inputs({ x: 1, flag: true }))), ['deny/deny/no_error: denied']);
});

test('variables are evaluated when read, once, and fail only the expressions that read them', () => {
  const p = policy({
    variables: [
      { name: 'bad', expression: 'object.missing > 1' },
      { name: 'n', expression: 'object.items.size()' },
    ],
    validations: [{ expression: 'variables.n < 3' }, { expression: 'variables.bad' }, { expression: 'variables.n + variables.n == 4' }],
  });
  assert.deepEqual(summary(evaluatePolicy(p, inputs({ items: [1, 2] }))), [
    'admit/admit/no_error: ',
    "deny/error/invalid_error: expression 'variables.bad' resulted in error: no such key: missing",
    'admit/admit/no_error: ',
  ]);
});

test('the per-call limit fails one expression; the budget stops the rest', () => {
  // contains() costs (length / 10)² in cel-go's units, charged at once: no wall clock involved.
  const heavy = 'object.s.contains(object.s)';
  const r = evaluatePolicy(policy({ validations: [{ expression: heavy }, { expression: 'true' }] }), inputs({ s: 'x'.repeat(20_000) }));
  assert.deepEqual(summary(r), [
    `deny/error/invalid_error: expression '${heavy}' resulted in error: operation cancelled: actual cost limit exceeded`,
    'admit/admit/no_error: ',
  ]);
  // 8,400 characters: 705,600 each, so the fifteenth exceeds the 10,000,000 budget.
  const many = evaluatePolicy(policy({ validations: Array.from({ length: 16 }, () => ({ expression: heavy })) }), inputs({ s: 'x'.repeat(8_400) }));
  assert.deepEqual(summary(many), ['deny/error/out_of_budget: validation failed due to running out of cost budget, no further validation rules will be run']);
});

test('audit annotations: strings trimmed and published, null and empty left out', () => {
  const p = policy({
    auditAnnotations: [
      { key: 'a', valueExpression: "'  value  '" },
      { key: 'b', valueExpression: 'null' },
      { key: 'c', valueExpression: "''" },
    ],
  });
  assert.deepEqual(evaluatePolicy(p, inputs({})).annotations, [{ key: 'a', value: 'value' }]);
});
