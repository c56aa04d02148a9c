// The OpenAPI value checks of a custom resource, compiled once per CRD
// version from its schema: type, nullable, format, enum, pattern, numeric
// bounds, lengths, item and property counts, required, allOf/anyOf/oneOf/not.
// Causes are worded as kube-apiserver words them (kube-openapi's messages
// turned into field errors the way apiextensions does it), e.g.
// `spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`.
import type { RE2JS } from '@bufbuild/re2';
import type { StatusCause } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue, setOwn } from '../api/own.js';
import { canonicalJson } from '../fieldmanager/shape.js';
import { jsonEqual } from '../api/json.js';
import { validateEmbedded } from './embedded.js';
import { formatCheck } from './formats.js';
import { collectingPatternTests, compileRe2, mayCompileSlowly, OffLoopPattern } from './offloop-patterns.js';
import type { Props } from './props.js';
import { fieldError, goFloat } from './render.js';

export interface ValueSchema {
  /** Accepted JSON types; empty = any. */
  readonly types: readonly string[];
  /** The same as bits of TYPE_BITS (0 = any); `number` admits integers. */
  readonly typeMask: number;
  readonly nullable: boolean;
  readonly format?: { readonly name: string; readonly check: (s: string) => boolean };
  readonly enum?: {
    /** Scalar members as they are; objects and arrays by their canonical JSON. */
    readonly scalars: ReadonlySet<unknown>;
    readonly composites: ReadonlySet<string>;
    readonly labels: readonly string[];
  };
  readonly pattern?: { readonly source: string; test(value: string): boolean };
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum: boolean;
  readonly exclusiveMaximum: boolean;
  readonly multipleOf?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems: boolean;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly required: readonly string[];
  readonly properties: ReadonlyMap<string, ValueSchema>;
  /** The properties as a list, walked when no other key can appear (no additionalProperties). */
  readonly propList: ReadonlyArray<readonly [string, ValueSchema]>;
  readonly additional?: ValueSchema;
  readonly items?: ValueSchema;
  readonly allOf: readonly ValueSchema[];
  readonly anyOf: readonly ValueSchema[];
  readonly oneOf: readonly ValueSchema[];
  readonly not?: ValueSchema;
  /** x-kubernetes-embedded-resource: apiVersion and kind are required. */
  readonly embedded: boolean;
  /** How an item finds its old self on update (ratcheting): by map keys, by value, or not at all. */
  readonly listType: 'atomic' | 'set' | 'map';
  readonly mapKeys: readonly string[];
}

const NO_PROPS: ReadonlyMap<string, ValueSchema> = new Map();
const TYPE_BITS: Readonly<Record<string, number>> = { string: 1, integer: 2, number: 4 | 2, boolean: 8, array: 16, object: 32 };

function typeBit(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return 1;
    case 'number':
      return Number.isInteger(v) ? 2 : 4;
    case 'boolean':
      return 8;
    default:
      return Array.isArray(v) ? 16 : 32;
  }
}

const isComposite = (v: unknown) => typeof v === 'object' && v !== null;

/**
 * A pattern as Go compiles it, compiled when a value first meets it: RE2's compiler here takes
 * tens to hundreds of milliseconds for one realistic pattern (an IPv6 address), and a CRD change
 * compiles its schema on every process sharing the store, while most patterns never see a value.
 * One that does not compile (a CRD stored before it was checked) checks nothing. A pattern that
 * may compile slowly (offloop-patterns.ts) is tested off the event loop instead.
 */
function compilePattern(source: string, found: OffLoopPattern[]): ValueSchema['pattern'] {
  if (mayCompileSlowly(source)) {
    const p = new OffLoopPattern(source);
    found.push(p);
    return p;
  }
  let re: RE2JS | null | undefined;
  return {
    source,
    test(value: string): boolean {
      if (re === undefined) re = compileRe2(source);
      return re === null || re.test(value);
    },
  };
}

/**
 * Compiles the value checks of an accepted schema (patterns compile: checkCrdSchema verified them).
 * `offLoop` receives the patterns tested off the event loop.
 */
export function compileValues(p: Props, offLoop: OffLoopPattern[] = []): ValueSchema {
  const compile = (x: Props) => compileValues(x, offLoop);
  const types = p.xIntOrString ? ['integer', 'string'] : p.type ? [p.type] : [];
  let format: ValueSchema['format'];
  if (p.format && (types.length === 0 || types.includes('string'))) {
    const check = formatCheck(p.format);
    if (check) format = { name: p.format, check };
  }
  let properties = NO_PROPS;
  if (p.properties?.size) {
    const m = new Map<string, ValueSchema>();
    for (const [k, v] of p.properties) m.set(k, compile(v));
    properties = m;
  }
  const items = p.items && !Array.isArray(p.items) ? compile(p.items as Props) : undefined;
  return {
    types,
    typeMask: types.reduce((m, t) => m | (TYPE_BITS[t] ?? 0), 0),
    nullable: p.nullable === true,
    format,
    enum: p.enum
      ? {
          scalars: new Set(p.enum.filter((e) => !isComposite(e))),
          composites: new Set(p.enum.filter(isComposite).map((e) => canonicalJson(e))),
          labels: p.enum.map((e) => (typeof e === 'string' ? e : canonicalJson(e))),
        }
      : undefined,
    pattern: p.pattern !== undefined ? compilePattern(p.pattern, offLoop) : undefined,
    minimum: p.minimum,
    maximum: p.maximum,
    exclusiveMinimum: p.exclusiveMinimum === true,
    exclusiveMaximum: p.exclusiveMaximum === true,
    multipleOf: p.multipleOf,
    minLength: p.minLength,
    maxLength: p.maxLength,
    minItems: p.minItems,
    maxItems: p.maxItems,
    uniqueItems: p.uniqueItems === true,
    minProperties: p.minProperties,
    maxProperties: p.maxProperties,
    required: p.required ?? [],
    properties,
    propList: [...properties],
    additional: typeof p.additionalProperties === 'object' ? compile(p.additionalProperties) : undefined,
    items,
    allOf: (p.allOf ?? []).map(compile),
    anyOf: (p.anyOf ?? []).map(compile),
    oneOf: (p.oneOf ?? []).map(compile),
    not: p.not ? compile(p.not) : undefined,
    embedded: p.xEmbeddedResource === true,
    listType: p.xListType === 'map' || p.xListType === 'set' ? p.xListType : 'atomic',
    mapKeys: p.xListMapKeys ?? [],
  };
}

/**
 * kube's list-type check: a set holds each value once, a map list each key
 * once (the second occurrence is named, once per value); map-list items are objects.
 */
function listDuplicates(v: readonly unknown[], s: ValueSchema, field: string, out: StatusCause[]): void {
  let keyOf: (x: unknown) => unknown;
  if (s.listType === 'map') {
    for (let i = 0; i < v.length; i++) {
      if (v[i] !== null && !isPlainObject(v[i])) {
        out.push(fieldError.invalid(`${field}[${i}]`, v[i], 'must be an object for an array of list-type map'));
        return;
      }
    }
    keyOf = (x) => {
      const key: Record<string, unknown> = {};
      // A map key named __proto__ is data: set as an own member, never the prototype.
      if (isPlainObject(x)) for (const k of s.mapKeys) if (hasOwn(x, k)) setOwn(key, k, ownValue(x, k));
      return key;
    };
  } else keyOf = (x) => x;
  if (v.length <= 1) return;
  const seen = new Map<string, number>();
  for (let i = 0; i < v.length; i++) {
    const key = keyOf(v[i]);
    const id = canonicalJson(key);
    const times = seen.get(id) ?? 0;
    seen.set(id, times + 1);
    if (times === 1) out.push(fieldError.duplicate(`${field}[${i}]`, key));
  }
}

/** The old item a new one correlates with: same map keys (map lists), an equal item (sets); undefined for atomic lists. */
function oldItem(s: ValueSchema, item: unknown, old: readonly unknown[]): unknown {
  if (s.listType === 'set') return old.find((x) => jsonEqual(x, item));
  if (s.listType !== 'map' || !isPlainObject(item)) return undefined;
  return old.find((x) => isPlainObject(x) && s.mapKeys.every((k) => jsonEqual(ownValue(x, k), ownValue(item, k))));
}

/** The JSON type of a decoded value, as kube-openapi names it. */
export function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

const childName = (name: string, key: string) => (name ? `${name}.${key}` : key);
// Paths and labels are built only when a check fails: the valid path allocates no strings but the child names.
const fieldOf = (base: string, name: string) => (base ? (name ? `${base}.${name}` : base) : name);

/**
 * Validates `v` against `s`. `name` is the path kube-openapi reports in
 * messages (`spec.replicas`); `base` the field path it is under (empty for a
 * custom resource, `….default` for a schema's default). `old` is the value
 * this one correlates with on update: an unchanged value is not checked
 * (kube's validation ratcheting), so a schema made stricter does not refuse
 * updates that leave old data alone.
 */
export function validateValue(v: unknown, s: ValueSchema, name: string, base: string, out: StatusCause[], old?: unknown): void {
  if (old !== undefined && jsonEqual(v, old)) return;
  if (v === null || v === undefined) {
    if (s.types.length > 0 && !s.nullable)
      out.push(fieldError.typeInvalid(fieldOf(base, name), 'null', `${name} in body must be of type ${s.types.join(',')}: "null"`));
    return;
  }
  if (s.typeMask !== 0 && (s.typeMask & typeBit(v)) === 0) {
    const t = jsonType(v);
    out.push(fieldError.typeInvalid(fieldOf(base, name), t, `${name} in body must be of type ${s.types.join(',')}: ${JSON.stringify(t)}`));
    return;
  }
  if (s.allOf.length || s.anyOf.length || s.oneOf.length || s.not) composition(v, s, name, base, out);
  if (typeof v === 'string') {
    const length = s.minLength !== undefined || s.maxLength !== undefined ? [...v].length : 0;
    if (s.maxLength !== undefined && length > s.maxLength) out.push(fieldError.tooLong(fieldOf(base, name), s.maxLength));
    if (s.minLength !== undefined && length < s.minLength)
      out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body should be at least ${s.minLength} chars long`));
    if (s.pattern && !s.pattern.test(v)) out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body should match '${s.pattern.source}'`));
    if (s.format && !s.format.check(v))
      out.push(fieldError.typeInvalid(fieldOf(base, name), v, `${name} in body must be of type ${s.format.name}: ${JSON.stringify(v)}`));
  } else if (typeof v === 'number') {
    if (s.multipleOf !== undefined && s.multipleOf > 0) {
      const q = v / s.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q)))
        out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body should be a multiple of ${goFloat(s.multipleOf)}`));
    }
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      out.push(
        fieldError.invalid(fieldOf(base, name), v, `${name} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${goFloat(s.maximum)}`),
      );
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      out.push(
        fieldError.invalid(fieldOf(base, name), v, `${name} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${goFloat(s.minimum)}`),
      );
    }
  } else if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems)
      out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body should have at least ${s.minItems} items`));
    if (s.maxItems !== undefined && v.length > s.maxItems) out.push(fieldError.tooMany(fieldOf(base, name), v.length, s.maxItems));
    if (s.uniqueItems && new Set(v.map((x) => canonicalJson(x))).size !== v.length)
      out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body shouldn't contain duplicates`));
    if (s.listType !== 'atomic') listDuplicates(v, s, fieldOf(base, name), out);
    if (s.items) {
      const olds = Array.isArray(old) && s.listType !== 'atomic' ? old : undefined;
      for (let i = 0; i < v.length; i++) validateValue(v[i], s.items, `${name}[${i}]`, base, out, olds && oldItem(s, v[i], olds));
    }
  }
  if (s.enum && !(isComposite(v) ? s.enum.composites.has(canonicalJson(v)) : s.enum.scalars.has(v)))
    out.push(fieldError.notSupported(fieldOf(base, name), v, s.enum.labels));
  if (isPlainObject(v)) validateObject(v, s, name, base, out, isPlainObject(old) ? old : undefined);
}

function validateObject(
  v: Record<string, unknown>,
  s: ValueSchema,
  name: string,
  base: string,
  out: StatusCause[],
  old: Record<string, unknown> | undefined,
): void {
  const counted = s.maxProperties !== undefined || s.minProperties !== undefined;
  const keys = counted || s.additional ? Object.keys(v) : undefined;
  if (keys && s.maxProperties !== undefined && keys.length > s.maxProperties) out.push(fieldError.tooMany(fieldOf(base, name), keys.length, s.maxProperties));
  if (keys && s.minProperties !== undefined && keys.length < s.minProperties)
    out.push(fieldError.invalid(fieldOf(base, name), v, `${name} in body should have at least ${s.minProperties} properties`));
  for (const r of s.required) {
    if (ownValue(v, r) === undefined) {
      const n = childName(name, r);
      out.push(fieldError.required(base ? `${base}.${n}` : n));
    }
  }
  if (s.embedded) validateEmbedded(v, fieldOf(base, name), out);
  if (keys && s.additional) {
    for (const k of keys) validateValue(v[k], s.properties.get(k) ?? s.additional, childName(name, k), base, out, old && ownValue(old, k));
    return;
  }
  // Only the schema's properties can be checked: walk those the object holds, in schema order.
  for (let i = 0; i < s.propList.length; i++) {
    const [k, sub] = s.propList[i]!;
    const x = v[k];
    // One lookup: what a JSON object inherits is a function or the __proto__ accessor's object, so only those need the own-property check.
    if (x === undefined || ((typeof x === 'function' || k === '__proto__') && !hasOwn(v, k))) continue;
    validateValue(x, sub, childName(name, k), base, out, old && ownValue(old, k));
  }
}

/** allOf/anyOf/oneOf/not: kube reports these without a field (`<nil>`). */
function composition(v: unknown, s: ValueSchema, name: string, base: string, out: StatusCause[]): void {
  const where = base || '<nil>';
  const run = (x: ValueSchema) => {
    const o: StatusCause[] = [];
    validateValue(v, x, name, base, o);
    return o;
  };
  if (s.anyOf.length) {
    let best: StatusCause[] | undefined;
    for (const x of s.anyOf) {
      const o = run(x);
      if (o.length === 0) {
        best = undefined;
        // Collecting pattern tests, every branch is walked: an untested value passes for now, and may not later.
        if (collectingPatternTests()) continue;
        break;
      }
      if (!best || o.length < best.length) best = o;
    }
    if (best) out.push(fieldError.invalid(where, '', `${JSON.stringify(name)} must validate at least one schema (anyOf)`), ...best);
  }
  if (s.oneOf.length) {
    let valid = 0;
    let best: StatusCause[] | undefined;
    for (const x of s.oneOf) {
      const o = run(x);
      if (o.length === 0) valid++;
      else if (!best || o.length < best.length) best = o;
    }
    if (valid !== 1) {
      out.push(
        fieldError.invalid(
          where,
          '',
          `${JSON.stringify(name)} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`,
        ),
      );
      if (valid === 0 && best) out.push(...best);
    }
  }
  if (s.allOf.length) {
    let failed = 0;
    for (const x of s.allOf) {
      const o = run(x);
      if (o.length) {
        failed++;
        out.push(...o);
      }
    }
    if (failed) out.push(fieldError.invalid(where, '', `${JSON.stringify(name)} must validate all the schemas (allOf)`));
  }
  if (s.not && run(s.not).length === 0) out.push(fieldError.invalid(where, '', `${JSON.stringify(name)} must not validate the schema (not)`));
}
