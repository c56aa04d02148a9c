// kube's policy TypeChecker: each validation's expression and
// messageExpression compiled again with `object`, `oldObject` and `params`
// typed from the schemas of the kinds the policy's resourceRules name
// (wildcards and subresources are not resolved, as kube does not), so that
// a field a kind does not have becomes a warning in status.typeChecking.
import { compileAdmission, type AdmissionDeclarations } from '../../../../lib/cel/admission.js';
import { BOOL, DOUBLE, DYN, INT, listOf, mapOf, STRING, TIMESTAMP, type CelT } from '../../../../lib/cel/types.js';
import type { KObject } from '../../../../lib/api/meta.js';
import type { Registry } from '../../../../lib/registry/index.js';
import { at, list, str } from '../../../../lib/registry/fields.js';
import type { ResourceType } from '../../../../lib/registry/types.js';
import type { Node } from '../../../../lib/schema/model.js';

export interface ExpressionWarning {
  readonly fieldRef: string;
  readonly warning: string;
}

const typesOf = new WeakMap<object, CelT>();

/** The checker's type of a schema node: fields of structs (open where unknown fields are kept), lists, maps, scalars. */
export function nodeType(n: Node): CelT {
  let t = typesOf.get(n);
  if (t) return t;
  switch (n.kind) {
    case 'scalar':
      t =
        n.type === 'string'
          ? n.format === 'date-time'
            ? TIMESTAMP
            : STRING
          : n.type === 'integer'
            ? INT
            : n.type === 'number'
              ? DOUBLE
              : n.type === 'boolean'
                ? BOOL
                : DYN;
      break;
    case 'list':
      t = listOf(nodeType(n.items));
      break;
    case 'map':
      t = mapOf(STRING, nodeType(n.values));
      break;
    case 'struct': {
      const fields = n.fields;
      // apiVersion, kind and metadata are every object's, whatever its table says.
      t = { kind: 'object', name: n.name, open: n.preserveUnknown === true, field: (f) => (fields.has(f) ? nodeType(fields.get(f)!.node) : undefined) };
      break;
    }
    default:
      t = DYN;
  }
  typesOf.set(n, t);
  return t;
}

const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');

/** kube's typesToCheck: the kinds of the resourceRules without wildcards, sorted by group, version and kind. */
function typesToCheck(policy: KObject, registry: Registry): ResourceType[] {
  const out = new Map<string, ResourceType>();
  for (const rule of list(at(policy, 'spec', 'matchConstraints'), 'resourceRules')) {
    const groups = strings(at(rule, 'apiGroups'));
    const versions = strings(at(rule, 'apiVersions'));
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    for (const g of groups)
      for (const v of versions)
        for (const r of strings(at(rule, 'resources'))) {
          if (/[*/]/.test(r)) continue;
          const t = registry.lookup(g, v, r);
          if (t) out.set(`${t.group}/${t.version}/${t.kind}`, t);
        }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...out.values()].sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
}

/** Go's schema.GroupVersionKind.String(). */
const gvkText = (t: ResourceType) => `${t.group}/${t.version}, Kind=${t.kind}`;

export function typeCheckPolicy(policy: KObject, registry: Registry): ExpressionWarning[] {
  const spec = at(policy, 'spec');
  const types = typesToCheck(policy, registry).filter((t) => t.schema !== undefined);
  if (types.length === 0) return [];
  const pk = at(spec, 'paramKind');
  let params: CelT | undefined;
  if (pk !== undefined && pk !== null) {
    const apiVersion = str(pk, 'apiVersion');
    const slash = apiVersion.indexOf('/');
    const pt = registry.byKind(slash < 0 ? '' : apiVersion.slice(0, slash), slash < 0 ? apiVersion : apiVersion.slice(slash + 1), str(pk, 'kind'));
    params = pt?.schema ? nodeType(pt.schema) : DYN;
  }
  const declared = list(spec, 'variables');
  const decls: AdmissionDeclarations = { params: params !== undefined, authorizer: true, variables: declared.length > 0 };
  const check = (expr: string, withAuthorizer: boolean): string => {
    const lines: string[] = [];
    for (const t of types) {
      const object = nodeType(t.schema!);
      const variables = new Map<string, CelT>();
      for (const v of declared) {
        const r = compileAdmission(str(v, 'expression'), decls, 'any', { object, ...(params ? { params } : {}), variables });
        variables.set(str(v, 'name'), 'type' in r ? r.type : DYN);
      }
      const r = compileAdmission(expr, { ...decls, authorizer: withAuthorizer }, 'any', { object, ...(params ? { params } : {}), variables });
      if ('error' in r) lines.push(`${gvkText(t)}: ${r.error}\n`);
    }
    return lines.join('\n');
  };
  const out: ExpressionWarning[] = [];
  list(spec, 'validations').forEach((v, i) => {
    const w = check(str(v, 'expression'), true);
    if (w) out.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    const me = str(v, 'messageExpression');
    if (me === '') return;
    const mw = check(me, false);
    if (mw) out.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: mw });
  });
  return out;
}
