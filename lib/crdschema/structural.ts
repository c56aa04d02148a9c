// kube's structural-schema rules (apiextensions-apiserver's
// schema.ValidateStructural): every specified node has a type, value
// validations (allOf/anyOf/oneOf/not) only restrict what the structural part
// already declares, `metadata` at the root may only restrict name and
// generateName, additionalProperties never at the root. Errors are sorted as
// kube sorts them.
import type { StatusCause } from '../api/status.js';
import { RE2JS } from '@bufbuild/re2';
import { costlyStep } from './progress.js';
import { fieldPath as P, type Props } from './props.js';
import { fieldError } from './render.js';

type Level = 'root' | 'item' | 'field';

export function validateStructural(s: Props, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  invariants(s, 'root', path, out);
  completeness(s, path, out);
  const text = (c: StatusCause) => `${c.field}: ${c.message}`;
  return out.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

const isIntOrStringAnyOf = (xs: readonly Props[] | undefined) =>
  xs?.length === 2 && xs[0]!.type === 'integer' && xs[1]!.type === 'string' && onlyType(xs[0]!) && onlyType(xs[1]!);

function onlyType(p: Props): boolean {
  return Object.keys(p.raw).length === 1;
}

function invariants(s: Props, lvl: Level, path: string, out: StatusCause[]): void {
  if (s.type === 'array' && s.items === undefined) out.push(fieldError.required(P.child(path, 'items'), 'must be specified'));
  if (s.items && !Array.isArray(s.items)) invariants(s.items as Props, 'item', P.child(path, 'items'), out);
  for (const [k, v] of s.properties ?? []) invariants(v, 'field', P.key(P.child(path, 'properties'), k), out);
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    if (lvl === 'root') out.push(fieldError.forbidden(P.child(path, 'additionalProperties'), 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') invariants(s.additionalProperties, 'field', P.child(path, 'additionalProperties'), out);
  }
  if (s.xIntOrString && s.xPreserveUnknownFields)
    out.push(fieldError.invalid(P.child(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (s.xIntOrString && s.xEmbeddedResource)
    out.push(fieldError.invalid(P.child(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));

  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = !!s.allOf?.length && isIntOrStringAnyOf(s.allOf[0]!.anyOf);
  valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, path, out);

  const checkMetadata = lvl === 'root' || s.xEmbeddedResource === true;
  if (s.xEmbeddedResource && s.type !== 'object') {
    if (!s.type) out.push(fieldError.required(P.child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else out.push(fieldError.invalid(P.child(path, 'type'), s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!s.type && !s.xIntOrString && !s.xPreserveUnknownFields) {
    const why =
      lvl === 'root'
        ? 'must not be empty at the root'
        : lvl === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    out.push(fieldError.required(P.child(path, 'type'), why));
  }
  if (s.xEmbeddedResource && s.additionalProperties !== undefined && s.additionalProperties !== false) {
    out.push(fieldError.forbidden(P.child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (lvl === 'root' && s.type && s.type !== 'object') out.push(fieldError.invalid(P.child(path, 'type'), s.type, 'must be object at the root'));
  const props = P.child(path, 'properties');
  for (const name of ['kind', 'apiVersion']) {
    const p = s.properties?.get(name);
    if (p && checkMetadata && p.type !== 'string') out.push(fieldError.invalid(P.child(P.key(props, name), 'type'), p.type ?? '', 'must be string'));
  }
  const metadata = s.properties?.get('metadata');
  if (metadata) {
    const mpath = P.key(props, 'metadata');
    if (checkMetadata && metadata.type !== 'object') out.push(fieldError.invalid(P.child(mpath, 'type'), metadata.type ?? '', 'must be object'));
    if (lvl === 'root' && !onlyNameAndGenerateName(metadata)) {
      out.push(fieldError.forbidden(mpath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (s.xEmbeddedResource && !s.xPreserveUnknownFields && !s.properties?.size) {
    out.push(
      fieldError.required(
        P.child(path, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
}

/** kube clears type, default and a name/generateName-only properties, then wants nothing left. */
function onlyNameAndGenerateName(m: Props): boolean {
  const keys = Object.keys(m.raw).filter((k) => k !== 'type' && k !== 'default');
  if (keys.some((k) => k !== 'properties')) return false;
  if (!m.properties) return true;
  const names = [...m.properties.keys()];
  return names.length > 0 && names.length <= 2 && names.every((n) => n === 'name' || n === 'generateName');
}

function valueValidation(v: Props, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: Level, path: string, out: StatusCause[]): void {
  if (!skipAnyOf) v.anyOf?.forEach((x, i) => nested(x, false, lvl, P.index(P.child(path, 'anyOf'), i), out));
  v.allOf?.forEach((x, i) => nested(x, skipFirstAllOfAnyOf && i === 0, lvl, P.index(P.child(path, 'allOf'), i), out));
  v.oneOf?.forEach((x, i) => nested(x, false, lvl, P.index(P.child(path, 'oneOf'), i), out));
  if (v.not) nested(v.not, false, lvl, P.child(path, 'not'), out);
  if (v.pattern !== undefined) {
    costlyStep(P.child(path, 'pattern'));
    try {
      RE2JS.compile(v.pattern);
    } catch (err) {
      out.push(
        fieldError.invalid(
          P.child(path, 'pattern'),
          v.pattern,
          `must be a valid regular expression, but isn't: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    }
  }
}

function nested(v: Props, skipAnyOf: boolean, lvl: Level, path: string, out: StatusCause[]): void {
  valueValidation(v, skipAnyOf, false, lvl, path, out);
  if (v.items && !Array.isArray(v.items)) nested(v.items as Props, false, lvl, P.child(path, 'items'), out);
  for (const [k, x] of v.properties ?? []) nested(x, false, 'field', P.key(P.child(path, 'properties'), k), out);
  const f = (name: string, detail: string) => out.push(fieldError.forbidden(P.child(path, name), detail));
  if (v.type) f('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) f('additionalProperties', 'must be undefined to be structural');
  if (v.hasDefault && v.default !== null) f('default', 'must be undefined to be structural');
  if (v.title) f('title', 'must be empty to be structural');
  if (v.description) f('description', 'must be empty to be structural');
  if (v.nullable) f('nullable', 'must be false to be structural');
  if (v.xPreserveUnknownFields) f('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v.xEmbeddedResource) f('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v.xIntOrString) f('x-kubernetes-int-or-string', 'must be false to be structural');
  if (v.xListMapKeys?.length) f('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (v.xListType !== undefined) f('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v.xMapType !== undefined) f('x-kubernetes-map-type', 'must be undefined to be structural');
  if (v.xValidations?.length) f('x-kubernetes-validations', 'must be empty to be structural');
  if (v.properties?.has('metadata'))
    out.push(fieldError.forbidden(P.key(P.child(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
}

/** Value validations may only mention properties and items the structural part specifies. */
function completeness(s: Props, path: string, out: StatusCause[]): void {
  const walk = (x: Props | undefined, sp: string): void => {
    if (!x) return;
    const vv = (v: Props, vp: string) => {
      v.allOf?.forEach((n, i) => nestedCompleteness(n, x, sp, P.index(P.child(vp, 'allOf'), i), out));
      v.anyOf?.forEach((n, i) => nestedCompleteness(n, x, sp, P.index(P.child(vp, 'anyOf'), i), out));
      v.oneOf?.forEach((n, i) => nestedCompleteness(n, x, sp, P.index(P.child(vp, 'oneOf'), i), out));
      if (v.not) nestedCompleteness(v.not, x, sp, P.child(vp, 'not'), out);
    };
    vv(x, sp);
    if (x.items && !Array.isArray(x.items)) walk(x.items as Props, P.child(sp, 'items'));
    for (const [k, p] of x.properties ?? []) walk(p, P.key(P.child(sp, 'properties'), k));
    if (typeof x.additionalProperties === 'object') walk(x.additionalProperties, P.child(sp, 'additionalProperties'));
  };
  walk(s, path);
}

function nestedCompleteness(v: Props, s: Props | undefined, sp: string, vp: string, out: StatusCause[]): void {
  if (!s) {
    out.push(fieldError.required(sp, `because it is defined in ${vp}`));
    return;
  }
  v.allOf?.forEach((n, i) => nestedCompleteness(n, s, sp, P.index(P.child(vp, 'allOf'), i), out));
  v.anyOf?.forEach((n, i) => nestedCompleteness(n, s, sp, P.index(P.child(vp, 'anyOf'), i), out));
  v.oneOf?.forEach((n, i) => nestedCompleteness(n, s, sp, P.index(P.child(vp, 'oneOf'), i), out));
  if (v.not) nestedCompleteness(v.not, s, sp, P.child(vp, 'not'), out);
  if (v.items && !Array.isArray(v.items)) {
    const si = s.items && !Array.isArray(s.items) ? (s.items as Props) : undefined;
    nestedCompleteness(v.items as Props, si, P.child(sp, 'items'), P.child(vp, 'items'), out);
  }
  for (const [k, x] of v.properties ?? []) {
    const sub = s.properties?.get(k) ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (!sub && !s.xPreserveUnknownFields)
      out.push(fieldError.required(P.key(P.child(sp, 'properties'), k), `because it is defined in ${P.key(P.child(vp, 'properties'), k)}`));
    else if (sub) nestedCompleteness(x, sub, P.key(P.child(sp, 'properties'), k), P.key(P.child(vp, 'properties'), k), out);
  }
}
