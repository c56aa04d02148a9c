// checkCrdSchema's rules beyond structurality, as apiextensions-apiserver's
// ValidateCustomResourceDefinitionOpenAPISchema states them: unsupported
// JSON-Schema members, uniqueItems, additionalProperties beside properties,
// list/map type consistency, list-map keys, defaults (allowed where, pruned,
// valid), and the x-kubernetes-validations members. CEL compilation and cost
// are in rules.ts, called from here per node with the rule's path.
import type { StatusCause } from '../api/status.js';
import { ownValue } from '../api/own.js';
import { prunedDefault } from './node.js';
import { fieldPath as P, type Props } from './props.js';
import { fieldError } from './render.js';
import { compileValues, validateValue } from './values.js';

const V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
export const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

interface Ctx {
  readonly allowDefaults: boolean;
  readonly defaultsReason: string;
  readonly insideMeta: boolean;
  /** The highest path that makes oldSelf uncorrelatable below it (atomic lists, sets, atomic maps). */
  readonly uncorrelatable?: string;
}

/** Called for each node with rules, after that node's and its children's schema errors are known. */
export type RuleCheck = (s: Props, path: string, uncorrelatable: string | undefined) => StatusCause[];

/** The OpenAPI-schema rules; `rules` compiles x-kubernetes-validations when the structural checks passed. */
export function checkOpenApi(s: Props, path: string, rules: RuleCheck | undefined): { schema: StatusCause[]; cel: StatusCause[] } {
  const out = { schema: [] as StatusCause[], cel: [] as StatusCause[] };
  walk(s, path, { allowDefaults: true, defaultsReason: '', insideMeta: false }, true, rules, out);
  return out;
}

function walk(s: Props, path: string, ctx: Ctx, root: boolean, rules: RuleCheck | undefined, out: { schema: StatusCause[]; cel: StatusCause[] }): void {
  const errs = out.schema;
  const before = errs.length;
  const c = (name: string) => P.child(path, name);
  // specStandardValidatorV3
  if (s.type && !V3_TYPES.includes(s.type)) errs.push(fieldError.notSupported(c('type'), s.type, V3_TYPES));
  if (s.hasDefault && !ctx.allowDefaults) errs.push(fieldError.forbidden(c('default'), `must not be set${ctx.defaultsReason ? ` ${ctx.defaultsReason}` : ''}`));
  const unsupported: Record<string, string> = {
    id: 'id is not supported',
    additionalItems: 'additionalItems is not supported',
    patternProperties: 'patternProperties is not supported',
    definitions: 'definitions is not supported',
    dependencies: 'dependencies is not supported',
    $ref: '$ref is not supported',
  };
  for (const k of ['id', 'additionalItems', 'patternProperties', 'definitions', 'dependencies', '$ref']) {
    if (s.unsupported.includes(k)) errs.push(fieldError.forbidden(c(k), unsupported[k]!));
  }
  if (s.type === 'null') errs.push(fieldError.forbidden(c('type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length) errs.push(fieldError.forbidden(c('items'), 'items must be a schema object and not an array'));
  if (ctx.insideMeta && s.xEmbeddedResource) errs.push(fieldError.forbidden(c('x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));

  if (s.uniqueItems) errs.push(fieldError.forbidden(c('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (s.additionalProperties !== undefined) {
    if (s.properties?.size && s.additionalProperties !== true) {
      errs.push(fieldError.forbidden(c('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    if (typeof s.additionalProperties === 'object') {
      const sub = ctx.insideMeta ? { ...ctx, allowDefaults: false, defaultsReason: 'inside additionalProperties applying to object metadata' } : ctx;
      walk(s.additionalProperties, c('additionalProperties'), sub, false, rules, out);
    }
  }
  for (const [k, v] of s.properties ?? []) {
    let sub = withOldSelf(ctx, s.xMapType === 'atomic' ? path : undefined);
    if ((root || s.xEmbeddedResource) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true };
      if (root) sub = { ...sub, allowDefaults: false, defaultsReason: `in top-level ${k}` };
    }
    walk(v, P.key(c('properties'), k), sub, false, rules, out);
  }
  if (s.not) walk(s.not, c('not'), ctx, false, undefined, out);
  s.allOf?.forEach((x, i) => walk(x, P.index(c('allOf'), i), ctx, false, undefined, out));
  s.oneOf?.forEach((x, i) => walk(x, P.index(c('oneOf'), i), ctx, false, undefined, out));
  s.anyOf?.forEach((x, i) => walk(x, P.index(c('anyOf'), i), ctx, false, undefined, out));
  if (s.items) {
    const sub = withOldSelf(ctx, s.xListType !== 'map' ? path : undefined);
    if (Array.isArray(s.items)) s.items.forEach((x, i) => walk(x, P.index(c('items'), i), sub, false, rules, out));
    else walk(s.items as Props, c('items'), sub, false, rules, out);
  }
  if (s.xPreserveUnknownFields === false) errs.push(fieldError.invalid(c('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  if (s.xMapType !== undefined && s.type !== 'object') {
    if (!s.type) errs.push(fieldError.required(c('type'), 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(fieldError.invalid(c('type'), s.type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (s.xMapType !== undefined && s.xMapType !== 'atomic' && s.xMapType !== 'granular')
    errs.push(fieldError.notSupported(c('x-kubernetes-map-type'), s.xMapType, ['atomic', 'granular']));
  const items = s.items && !Array.isArray(s.items) ? (s.items as Props) : undefined;
  if (s.xListType !== undefined && s.type !== 'array') {
    if (!s.type) errs.push(fieldError.required(c('type'), 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(fieldError.invalid(c('type'), s.type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (s.xListType === 'set' && items) {
    if (items.type === 'array' && items.xListType !== undefined && items.xListType !== 'atomic') {
      errs.push(
        fieldError.invalid(P.child(c('items'), 'x-kubernetes-list-type'), items.xListType, 'must be atomic as item of a list with x-kubernetes-list-type=set'),
      );
    } else if (items.type === 'object' && items.xMapType !== 'atomic') {
      errs.push(
        fieldError.invalid(P.child(c('items'), 'x-kubernetes-map-type'), s.xListType, 'must be atomic as item of a list with x-kubernetes-list-type=set'),
      );
    }
  }
  if (s.xListType !== undefined && !['atomic', 'set', 'map'].includes(s.xListType))
    errs.push(fieldError.notSupported(c('x-kubernetes-list-type'), s.xListType, ['atomic', 'map', 'set']));
  if (s.xListMapKeys?.length) {
    if (s.xListType === undefined) errs.push(fieldError.required(c('x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (s.xListType !== 'map')
      errs.push(fieldError.invalid(c('x-kubernetes-list-type'), s.xListType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (s.xListType === 'map') {
    if (!s.xListMapKeys?.length) errs.push(fieldError.required(c('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (s.items === undefined) errs.push(fieldError.required(c('items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(s.items))
      errs.push(
        fieldError.invalid(
          c('items'),
          s.items.map((x) => x.raw),
          'must only have a single schema if x-kubernetes-list-type is map',
        ),
      );
    if (items && items.type !== 'object')
      errs.push(fieldError.invalid(P.child(c('items'), 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of s.xListMapKeys ?? []) {
        const kp = items.properties?.get(k);
        if (kp) {
          if (kp.type === 'array' || kp.type === 'object')
            errs.push(
              fieldError.invalid(
                P.child(P.key(P.child(c('items'), 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
        } else {
          errs.push(fieldError.invalid(c('x-kubernetes-list-map-keys'), s.xListMapKeys, 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(fieldError.invalid(c('x-kubernetes-list-map-keys'), s.xListMapKeys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  mapListKeysMapSet(s, items, path, errs);
  ruleMembers(s, path, errs);
  // CEL only when nothing is wrong with this node's schema or below it (kube: such errors make CEL messages unactionable).
  if (s.xValidations?.length && rules && errs.length === before) out.cel.push(...rules(s, path, ctx.uncorrelatable));
}

function withOldSelf(ctx: Ctx, path: string | undefined): Ctx {
  return path === undefined || ctx.uncorrelatable !== undefined ? ctx : { ...ctx, uncorrelatable: path };
}

function mapListKeysMapSet(s: Props, items: Props | undefined, path: string, errs: StatusCause[]): void {
  if (!items || (s.xListType !== 'set' && s.xListType !== 'map')) return;
  const ip = P.child(path, 'items');
  if (items.nullable) errs.push(fieldError.forbidden(P.child(ip, 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${s.xListType}`));
  if (s.xListType !== 'map') return;
  const required = new Set(items.required ?? []);
  for (const k of s.xListMapKeys ?? []) {
    const kp = items.properties?.get(k);
    if (!kp) continue;
    const kpath = P.key(P.child(ip, 'properties'), k);
    if (!required.has(k) && !kp.hasDefault)
      errs.push(
        fieldError.required(P.child(kpath, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'),
      );
    if (kp.nullable) errs.push(fieldError.forbidden(P.child(kpath, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
  }
}

const NEWLINE = /[\n\r]/;

function ruleMembers(s: Props, path: string, errs: StatusCause[]): void {
  s.xValidations?.forEach((r, i) => {
    const rp = P.index(P.child(path, 'x-kubernetes-validations'), i);
    const rule = r.rule.trim();
    const msg = (r.message ?? '').trim();
    if (!rule) errs.push(fieldError.required(P.child(rp, 'rule'), 'rule is not specified'));
    else if (r.message !== undefined && r.message.length > 0 && !msg)
      errs.push(fieldError.invalid(P.child(rp, 'message'), r.message, 'must be non-empty if specified'));
    else if (NEWLINE.test(msg)) errs.push(fieldError.invalid(P.child(rp, 'message'), r.message, 'must not contain line breaks'));
    else if (NEWLINE.test(rule) && !msg) errs.push(fieldError.required(P.child(rp, 'message'), 'message must be specified if rule contains line breaks'));
    if (r.messageExpression !== undefined && r.messageExpression.length > 0 && !r.messageExpression.trim()) {
      errs.push(fieldError.required(P.child(rp, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (r.reason !== undefined && !REASONS.includes(r.reason)) errs.push(fieldError.notSupported(P.child(rp, 'reason'), r.reason, REASONS));
    if (r.fieldPath !== undefined && r.fieldPath.length > 0 && !r.fieldPath.trim())
      errs.push(fieldError.invalid(P.child(rp, 'fieldPath'), r.fieldPath, 'must be non-empty if specified'));
    if (r.fieldPath !== undefined && NEWLINE.test(r.fieldPath))
      errs.push(fieldError.invalid(P.child(rp, 'fieldPath'), r.fieldPath, 'must not contain line breaks'));
    if (r.fieldPath?.trim() && resolveFieldPath(s, r.fieldPath) === undefined)
      errs.push(fieldError.invalid(P.child(rp, 'fieldPath'), r.fieldPath, 'must be a valid path'));
  });
}

/**
 * A rule's fieldPath (`.spec.foo`, `.a['b.c']`, `.list[0]`) resolved against
 * the schema: the field path it names (kube's form), or undefined when the
 * schema has no such field.
 */
export function resolveFieldPath(s: Props, fieldPath: string): string[] | undefined {
  const parts: string[] = [];
  let cur: Props | undefined = s;
  let rest = fieldPath.trim();
  while (rest.length) {
    if (!cur) return undefined;
    let m: RegExpExecArray | null;
    if ((m = /^\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(rest))) {
      const k = m[1]!;
      const next: Props | undefined = cur.properties?.get(k) ?? (typeof cur.additionalProperties === 'object' ? cur.additionalProperties : undefined);
      if (!next) return undefined;
      parts.push(k);
      cur = next;
      rest = rest.slice(m[0].length);
    } else if ((m = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest))) {
      const k = m[1]!.replace(/\\(.)/g, '$1');
      const next: Props | undefined = cur.properties?.get(k) ?? (typeof cur.additionalProperties === 'object' ? cur.additionalProperties : undefined);
      if (!next) return undefined;
      parts.push(k);
      cur = next;
      rest = rest.slice(m[0].length);
    } else if ((m = /^\[(\d+)\]/.exec(rest))) {
      if (cur.type !== 'array' || !cur.items || Array.isArray(cur.items)) return undefined;
      parts[parts.length - 1] = `${parts[parts.length - 1] ?? ''}[${m[1]}]`;
      cur = cur.items as Props;
      rest = rest.slice(m[0].length);
    } else {
      return undefined;
    }
  }
  return parts;
}

/**
 * kube's ValidateDefaults: every default (outside resource metadata) must
 * survive pruning unchanged and validate against its own schema; causes
 * name `….default`.
 */
export function checkDefaults(
  s: Props,
  path: string,
  resourceRoot: boolean,
  validateRules?: (s: Props, value: unknown, path: string) => StatusCause[],
  requirePruned = true,
): StatusCause[] {
  const out: StatusCause[] = [];
  forEachDefault(s, path, resourceRoot, (x, p) => {
    const dp = P.child(p, 'default');
    if (requirePruned && !isPruned(x)) {
      out.push(fieldError.invalid(dp, x.default, 'must not have unknown fields'));
      return;
    }
    const before = out.length;
    validateValue(x.default, compileValues(x), '', dp, out);
    if (out.length === before && validateRules) out.push(...validateRules(x, x.default, dp));
  });
  return out;
}

/** Whether any default of the schema holds fields its schema prunes (kube's schemaHasUnprunedDefaults). */
export function hasUnprunedDefaults(s: Props): boolean {
  let found = false;
  forEachDefault(s, '', true, (x) => {
    if (!found && !isPruned(x)) found = true;
  });
  return found;
}

/** Whether a node's default survives pruning by its own schema unchanged. */
function isPruned(x: Props): boolean {
  return !prunedDefault(x).changed;
}

/** Every node with a non-null default outside resource metadata, with its path. */
function forEachDefault(s: Props, path: string, resourceRoot: boolean, fn: (x: Props, path: string) => void): void {
  const visit = (x: Props, p: string, insideMeta: boolean) => {
    if (x.hasDefault && x.default !== null && !insideMeta) fn(x, p);
    const items = x.items && !Array.isArray(x.items) ? (x.items as Props) : undefined;
    if (items) visit(items, P.child(p, 'items'), insideMeta);
    for (const [k, v] of x.properties ?? []) {
      const meta = insideMeta || ((p === path ? resourceRoot : x.xEmbeddedResource === true) && k === 'metadata');
      visit(v, P.key(P.child(p, 'properties'), k), meta);
    }
    if (typeof x.additionalProperties === 'object') visit(x.additionalProperties, P.child(p, 'additionalProperties'), insideMeta);
  };
  visit(s, path, false);
}

// JSONSchemaProps' members in Go's field order, with their Go names (kube's message lists those).
const ROOT_MEMBERS: ReadonlyArray<readonly [string, string]> = [
  ['id', 'ID'],
  ['$schema', 'Schema'],
  ['$ref', 'Ref'],
  ['description', 'Description'],
  ['type', 'Type'],
  ['format', 'Format'],
  ['title', 'Title'],
  ['default', 'Default'],
  ['maximum', 'Maximum'],
  ['exclusiveMaximum', 'ExclusiveMaximum'],
  ['minimum', 'Minimum'],
  ['exclusiveMinimum', 'ExclusiveMinimum'],
  ['maxLength', 'MaxLength'],
  ['minLength', 'MinLength'],
  ['pattern', 'Pattern'],
  ['maxItems', 'MaxItems'],
  ['minItems', 'MinItems'],
  ['uniqueItems', 'UniqueItems'],
  ['multipleOf', 'MultipleOf'],
  ['enum', 'Enum'],
  ['maxProperties', 'MaxProperties'],
  ['minProperties', 'MinProperties'],
  ['required', 'Required'],
  ['items', 'Items'],
  ['allOf', 'AllOf'],
  ['oneOf', 'OneOf'],
  ['anyOf', 'AnyOf'],
  ['not', 'Not'],
  ['properties', 'Properties'],
  ['additionalProperties', 'AdditionalProperties'],
  ['patternProperties', 'PatternProperties'],
  ['dependencies', 'Dependencies'],
  ['additionalItems', 'AdditionalItems'],
  ['definitions', 'Definitions'],
  ['externalDocs', 'ExternalDocs'],
  ['example', 'Example'],
  ['nullable', 'Nullable'],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields'],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource'],
  ['x-kubernetes-int-or-string', 'XIntOrString'],
  ['x-kubernetes-list-map-keys', 'XListMapKeys'],
  ['x-kubernetes-list-type', 'XListType'],
  ['x-kubernetes-map-type', 'XMapType'],
  ['x-kubernetes-validations', 'XValidations'],
];
const ALLOWED_AT_STATUS_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0);
}

/** kube's root restriction when the status subresource is enabled; the first offending member only, as kube stops there. */
export function statusRoot(s: Props, path: string): StatusCause[] {
  for (const [json, go] of ROOT_MEMBERS) {
    const v = ownValue(s.raw, json);
    if (isZero(v)) continue;
    if (go === 'Type') {
      if (v !== 'object')
        return [
          fieldError.invalid(P.child(path, 'type'), v, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'),
        ];
      continue;
    }
    if (!ALLOWED_AT_STATUS_ROOT.includes(go)) {
      return [
        fieldError.invalid(
          path,
          s.raw,
          `only [${ALLOWED_AT_STATUS_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      ];
    }
  }
  return [];
}
