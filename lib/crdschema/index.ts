// The schema of one CustomResourceDefinition version, compiled once per CRD
// version: the contract between the CRD serving code (backends/core/crd*) and
// the schema machinery of this folder. The registry entry of a custom resource
// takes `node` as ResourceType.schema, `defaults` and `validate` as its hooks.
//
// The work is in the files beside this one (README.md lists them); this file
// only wires them: read the schema once (props.ts), check it (structural.ts,
// check.ts, rules.ts), compile it (node.ts, defaults.ts, values.ts, rules.ts).
import type { KObject } from '../api/meta.js';
import { deepFreezeJson } from '../api/json.js';
import type { StatusCause } from '../api/status.js';
import type { StructNode } from '../schema/model.js';
import { checkDefaults, checkOpenApi, hasUnprunedDefaults, statusRoot, type RuleCheck } from './check.js';
import { applyDefaults, compileDefaults } from './defaults.js';
import { definitionOf, rootNode } from './node.js';
import { readProps } from './props.js';
import { publishedDefinitions } from './publish.js';
import { fieldError } from './render.js';
import { compileRules, defaultRuleCheck, ruleCheck, totalCost, type ValidateOptions } from './rules.js';
import { validateStructural } from './structural.js';
import { compileValues, validateValue } from './values.js';
import { collectPatternTests, type OffLoopPattern, type PatternTest } from './offloop-patterns.js';

export type { ValidateOptions } from './rules.js';
export { onCostlyStep } from './progress.js';
export { compileRe2, type PatternTest } from './offloop-patterns.js';

/**
 * How often this process did each costly step, for the tests that hold a CRD change to
 * compiling that CRD alone: `compiled` (compileCrdSchema, per version), `checked`
 * (checkCrdSchema, per version at CRD write), `structural` (structuralViolations, per version).
 */
export const schemaWork = { compiled: 0, checked: 0, structural: 0 };

/** What identifies the version being compiled (error messages, OpenAPI names). */
export interface CrdVersionRef {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
}

export interface CrdVersionSchema {
  /**
   * The structural schema as the registry's node model (field validation and
   * unknown-field pruning, server-side apply, OpenAPI). Absent: every field kept.
   */
  readonly node?: StructNode;
  /** Applies the schema's `default`s in place (on create, update, and on read from storage). */
  defaults(obj: KObject): void;
  /** OpenAPI value checks and x-kubernetes-validations (old = the stored object on update). */
  validate(obj: KObject, old: KObject | undefined, options?: ValidateOptions): StatusCause[];
  /** The kind's schema as kube publishes it in /openapi/v3 (the `definitions('v3')` entry of the kind). */
  readonly openapi: Record<string, unknown>;
  /**
   * The kind's and the list kind's definitions as kube publishes them, keyed by
   * definition name (`com.example.stable.v1.CronTab`, `….CronTabList`): v2
   * refers to `#/definitions/…`, v3 to `#/components/schemas/…` (ObjectMeta, ListMeta).
   */
  definitions?(flavor: 'v2' | 'v3'): Record<string, Record<string, unknown>>;
  /**
   * Present when the schema has x-kubernetes-validations: they compile in slices of a few
   * milliseconds from compileCrdSchema on (a thousand rules took seconds of event loop), and
   * this resolves once all are; `validate` before that compiles what is left at once.
   */
  ready?(): Promise<void>;
  /**
   * Present when the schema has patterns that may compile slowly (offloop-patterns.ts): the
   * tests of such patterns that `validate` would make for this write (the object as it will
   * be defaulted), for the caller to have them answered off the event loop first.
   */
  patternTests?(obj: KObject, old: KObject | undefined): PatternTest[];
}

export interface CheckOptions {
  /** The version serves the status subresource: the root may hold only what survives extracting `properties.status`. */
  readonly statusSubresource?: boolean;
  /**
   * kube's requireStructuralSchema off: the update of a CRD stored with a
   * non-structural schema (a legacy object) may keep one. Structural violations
   * are not reported then, nor are the checks that need a structural schema
   * (defaults, CEL rules) made on a schema that has them.
   */
  readonly allowNonStructural?: boolean;
  /**
   * kube's requirePrunedDefaults off: the update of a CRD whose stored schemas
   * already hold a default with fields its schema prunes (a legacy object, see
   * `schemaHasUnprunedDefaults`) may keep such defaults; they are still validated.
   */
  readonly allowUnprunedDefaults?: boolean;
  /**
   * kube's suppressPerExpressionCost: the version's schema is the one stored
   * (a CRD update that did not change it), so a rule over the per-expression
   * estimated cost limit is kept (the limit may have moved since it was
   * accepted); the per-schema total is still enforced, as kube enforces it.
   */
  readonly unchangedSchema?: boolean;
}

/**
 * The structural-schema violations of a stored schema (kube's
 * NonStructuralSchema condition), in kube's order; a schema that cannot even be
 * read gives its decoding causes.
 */
export function structuralViolations(schema: unknown, field: string): StatusCause[] {
  if (schema === undefined || schema === null) return [];
  schemaWork.structural++;
  const decoding: StatusCause[] = [];
  const props = readProps(schema, field, decoding);
  if (!props || decoding.length) return decoding;
  return validateStructural(props, field);
}

/**
 * Checks a CRD version's `schema.openAPIV3Schema` at CRD create/update:
 * structural rules, CEL rules that do not compile, estimated cost over budget.
 * `field` is the path of the schema in the CRD (`spec.versions[0].schema.openAPIV3Schema`);
 * every cause's `field` starts with it. Empty = accepted.
 */
export function checkCrdSchema(schema: unknown, field: string, options: CheckOptions = {}): StatusCause[] {
  if (schema === undefined || schema === null) return [];
  schemaWork.checked++;
  const decoding: StatusCause[] = [];
  const props = readProps(schema, field, decoding);
  if (!props || decoding.length) return decoding;
  const out: StatusCause[] = [];
  if (options.statusSubresource) out.push(...statusRoot(props, field));
  if (props.nullable) out.push(fieldError.forbidden(`${field}.nullable`, 'nullable cannot be true at the root'));
  const structural = validateStructural(props, field);
  let rules: RuleCheck | undefined;
  if (structural.length) {
    if (!options.allowNonStructural) out.push(...structural);
  } else {
    const defaults = checkDefaults(props, field, true, defaultRuleCheck(props), !options.allowUnprunedDefaults);
    if (defaults.length) out.push(...defaults);
    else rules = options.unchangedSchema ? withoutExpressionCost(ruleCheck(props, field)) : ruleCheck(props, field);
  }
  const { schema: schemaErrors, cel } = checkOpenApi(props, field, rules);
  out.push(...schemaErrors, ...cel);
  if (rules && out.length === 0) out.push(...totalCost(props, field));
  return out;
}

/** kube's per-expression cost errors (rule and messageExpression), in the words rules.ts gives them. */
const EXPRESSION_COST = /^Forbidden: estimated (rule|messageExpression) cost exceeds budget by factor of /;

/** A RuleCheck that keeps everything but the per-expression cost errors (their costs still count towards the total). */
function withoutExpressionCost(check: RuleCheck): RuleCheck {
  return (s, path, uncorrelatable) => check(s, path, uncorrelatable).filter((c) => !EXPRESSION_COST.test(c.message ?? ''));
}

/** Whether a stored schema has a default its own schema would prune (kube's requirePrunedDefaults is then off on update). */
export function schemaHasUnprunedDefaults(schema: unknown): boolean {
  if (schema === undefined || schema === null) return false;
  const decoding: StatusCause[] = [];
  const props = readProps(schema, 'openAPIV3Schema', decoding);
  if (!props || decoding.length || validateStructural(props, 'openAPIV3Schema').length) return false;
  return hasUnprunedDefaults(props);
}

/** Compiles an accepted schema (checkCrdSchema returned no cause) for serving. */
export function compileCrdSchema(schema: unknown, ref: CrdVersionRef): CrdVersionSchema {
  schemaWork.compiled++;
  const definition = definitionOf(ref.group, ref.version, ref.kind);
  const names = { name: `${ref.group}.${ref.kind}`, definition };
  if (schema === undefined || schema === null) {
    const published = deepFreezeJson({ v2: publishedDefinitions(undefined, ref, 'v2'), v3: publishedDefinitions(undefined, ref, 'v3') });
    const definitions = (flavor: 'v2' | 'v3') => published[flavor];
    return { node: rootNode(undefined, names), openapi: definitions('v3')[definition]!, definitions, defaults: () => {}, validate: () => [] };
  }
  const causes: StatusCause[] = [];
  const props = readProps(schema, 'openAPIV3Schema', causes);
  if (!props) throw new Error(`schema of ${definition} is not an object; checkCrdSchema refuses it`);
  const node = rootNode(props, names);
  const offLoop: OffLoopPattern[] = [];
  const values = compileValues(props, offLoop);
  const defaultTree = compileDefaults(props);
  const rules = compileRules(props);
  const published = deepFreezeJson({ v2: publishedDefinitions(props, ref, 'v2'), v3: publishedDefinitions(props, ref, 'v3') });
  return {
    node,
    openapi: published.v3[definition]!,
    definitions: (flavor) => published[flavor],
    ...(rules ? { ready: () => rules.ready() } : {}),
    ...(offLoop.length
      ? {
          patternTests(obj: KObject, old: KObject | undefined): PatternTest[] {
            const defaulted = structuredClone(obj);
            if (defaultTree) applyDefaults(defaulted, defaultTree);
            return collectPatternTests(() => validateValue(defaulted, values, '', '', [], old));
          },
        }
      : {}),
    defaults(obj: KObject): void {
      if (defaultTree) applyDefaults(obj, defaultTree);
    },
    validate(obj: KObject, old: KObject | undefined, options?: ValidateOptions): StatusCause[] {
      const out: StatusCause[] = [];
      validateValue(obj, values, '', '', out, old);
      if (rules) out.push(...rules.validate(obj, old, options));
      return out;
    },
  };
}
