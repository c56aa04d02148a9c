// A CRD's `openAPIV3Schema` as sent by the client, read into a typed tree
// (kube's JSONSchemaProps) by own properties only. Members of the wrong JSON
// type become causes naming the member, as kube's decoding would refuse them;
// the checks and the compilers then work on this tree, never on the raw body.
import { hasOwn, ownValue } from '../api/own.js';
import { cause, type StatusCause } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';

export interface Rule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

export interface Props {
  readonly type?: string;
  readonly format?: string;
  readonly title?: string;
  readonly description?: string;
  readonly nullable?: boolean;
  /** Present (even `null`) = the schema has a default. */
  readonly hasDefault: boolean;
  readonly default?: unknown;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: boolean;
  readonly exclusiveMaximum?: boolean;
  readonly multipleOf?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly required?: readonly string[];
  readonly properties?: ReadonlyMap<string, Props>;
  /** One schema, or the forbidden array form. */
  readonly items?: Props | readonly Props[];
  /** `false`/`true` (allows) or a schema. */
  readonly additionalProperties?: boolean | Props;
  readonly allOf?: readonly Props[];
  readonly anyOf?: readonly Props[];
  readonly oneOf?: readonly Props[];
  readonly not?: Props;
  readonly xPreserveUnknownFields?: boolean;
  readonly xEmbeddedResource?: boolean;
  readonly xIntOrString?: boolean;
  readonly xListType?: string;
  readonly xListMapKeys?: readonly string[];
  readonly xMapType?: string;
  readonly xValidations?: readonly Rule[];
  /** Members kube refuses outright; kept only to name them. */
  readonly unsupported: readonly string[];
  /** The raw JSON of this node (published as OpenAPI). */
  readonly raw: Record<string, unknown>;
}

const UNSUPPORTED = ['$ref', 'id', 'additionalItems', 'patternProperties', 'definitions', 'dependencies'] as const;

type Reader = (raw: Record<string, unknown>, key: string) => unknown;

/** Reads a schema; problems with member types are appended to `causes`. */
export function readProps(raw: unknown, path: string, causes: StatusCause[]): Props | undefined {
  if (!isPlainObject(raw)) {
    causes.push(cause.typeInvalid(path, raw, 'must be of type object'));
    return undefined;
  }
  const get = <T>(key: string, want: 'string' | 'boolean' | 'number' | 'integer'): T | undefined => {
    const v = ownValue(raw, key);
    if (v === undefined || v === null) return undefined;
    const ok = want === 'integer' ? Number.isInteger(v) && (v as number) >= 0 : typeof v === want;
    if (!ok) {
      causes.push(cause.typeInvalid(`${path}.${key}`, v, `must be of type ${want === 'integer' ? 'non-negative integer' : want}`));
      return undefined;
    }
    return v as T;
  };
  const sub = (key: string): Props | undefined => {
    const v = ownValue(raw, key);
    return v === undefined || v === null ? undefined : readProps(v, `${path}.${key}`, causes);
  };
  const list = (key: string): Props[] | undefined => {
    const v = ownValue(raw, key);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      causes.push(cause.typeInvalid(`${path}.${key}`, v, 'must be of type array'));
      return undefined;
    }
    return v.map((x, i) => readProps(x, `${path}.${key}[${i}]`, causes)).filter((x): x is Props => x !== undefined);
  };
  const strings = (key: string): string[] | undefined => {
    const v = ownValue(raw, key);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      causes.push(cause.typeInvalid(`${path}.${key}`, v, 'must be of type array of string'));
      return undefined;
    }
    return v as string[];
  };
  let properties: Map<string, Props> | undefined;
  const rawProps = ownValue(raw, 'properties');
  if (rawProps !== undefined && rawProps !== null) {
    if (!isPlainObject(rawProps)) causes.push(cause.typeInvalid(`${path}.properties`, rawProps, 'must be of type object'));
    else {
      properties = new Map();
      for (const k of Object.keys(rawProps)) {
        const p = readProps(rawProps[k], `${path}.properties[${k}]`, causes);
        if (p) properties.set(k, p);
      }
    }
  }
  let items: Props | Props[] | undefined;
  const rawItems = ownValue(raw, 'items');
  if (Array.isArray(rawItems)) items = list('items');
  else if (rawItems !== undefined && rawItems !== null) items = sub('items');
  let additionalProperties: boolean | Props | undefined;
  const rawAdditional = ownValue(raw, 'additionalProperties');
  if (typeof rawAdditional === 'boolean') additionalProperties = rawAdditional;
  else if (rawAdditional !== undefined && rawAdditional !== null) additionalProperties = sub('additionalProperties');
  let enumValues: unknown[] | undefined;
  const rawEnum = ownValue(raw, 'enum');
  if (rawEnum !== undefined && rawEnum !== null) {
    if (!Array.isArray(rawEnum)) causes.push(cause.typeInvalid(`${path}.enum`, rawEnum, 'must be of type array'));
    else enumValues = rawEnum;
  }
  return {
    type: get('type', 'string'),
    format: get('format', 'string'),
    title: get('title', 'string'),
    description: get('description', 'string'),
    nullable: get('nullable', 'boolean'),
    hasDefault: hasOwn(raw, 'default'),
    default: ownValue(raw, 'default'),
    enum: enumValues,
    pattern: get('pattern', 'string'),
    minimum: get('minimum', 'number'),
    maximum: get('maximum', 'number'),
    exclusiveMinimum: get('exclusiveMinimum', 'boolean'),
    exclusiveMaximum: get('exclusiveMaximum', 'boolean'),
    multipleOf: get('multipleOf', 'number'),
    minLength: get('minLength', 'integer'),
    maxLength: get('maxLength', 'integer'),
    minItems: get('minItems', 'integer'),
    maxItems: get('maxItems', 'integer'),
    uniqueItems: get('uniqueItems', 'boolean'),
    minProperties: get('minProperties', 'integer'),
    maxProperties: get('maxProperties', 'integer'),
    required: strings('required'),
    properties,
    items,
    additionalProperties,
    allOf: list('allOf'),
    anyOf: list('anyOf'),
    oneOf: list('oneOf'),
    not: sub('not'),
    xPreserveUnknownFields: get('x-kubernetes-preserve-unknown-fields', 'boolean'),
    xEmbeddedResource: get('x-kubernetes-embedded-resource', 'boolean'),
    xIntOrString: get('x-kubernetes-int-or-string', 'boolean'),
    xListType: get('x-kubernetes-list-type', 'string'),
    xListMapKeys: strings('x-kubernetes-list-map-keys'),
    xMapType: get('x-kubernetes-map-type', 'string'),
    xValidations: readRules(raw, `${path}.x-kubernetes-validations`, causes, ownValue as Reader),
    unsupported: UNSUPPORTED.filter((k) => hasOwn(raw, k) && !isEmpty(raw[k])),
    raw,
  };
}

function isEmpty(v: unknown): boolean {
  return v === null || v === '' || (isPlainObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);
}

function readRules(raw: Record<string, unknown>, path: string, causes: StatusCause[], get: Reader): Rule[] | undefined {
  const v = get(raw, 'x-kubernetes-validations');
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    causes.push(cause.typeInvalid(path, v, 'must be of type array'));
    return undefined;
  }
  const out: Rule[] = [];
  v.forEach((r, i) => {
    if (!isPlainObject(r)) {
      causes.push(cause.typeInvalid(`${path}[${i}]`, r, 'must be of type object'));
      return;
    }
    const str = (k: string): string | undefined => {
      const x = ownValue(r, k);
      if (x === undefined || x === null) return undefined;
      if (typeof x !== 'string') {
        causes.push(cause.typeInvalid(`${path}[${i}].${k}`, x, 'must be of type string'));
        return undefined;
      }
      return x;
    };
    const old = ownValue(r, 'optionalOldSelf');
    if (old !== undefined && old !== null && typeof old !== 'boolean')
      causes.push(cause.typeInvalid(`${path}[${i}].optionalOldSelf`, old, 'must be of type boolean'));
    out.push({
      rule: str('rule') ?? '',
      message: str('message'),
      messageExpression: str('messageExpression'),
      reason: str('reason'),
      fieldPath: str('fieldPath'),
      optionalOldSelf: typeof old === 'boolean' ? old : undefined,
    });
  });
  return out;
}

/** kube's field.Path rendering: `.child`, `[key]`, `[index]`. */
export const fieldPath = {
  child: (p: string, name: string): string => (p ? `${p}.${name}` : name),
  key: (p: string, key: string): string => `${p}[${key}]`,
  index: (p: string, i: number): string => `${p}[${i}]`,
};
