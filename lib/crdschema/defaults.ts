// kube's structural defaulting: an absent property (or a `null` one that is
// not nullable) whose schema has a `default` gets a deep copy of it, inside
// items and additionalProperties too; then the walk goes on into the value,
// so a default's own members are defaulted as well. Compiled once into a tree
// of only the branches that hold a default, so a schema without defaults
// costs nothing per request. Each default is pruned by its own schema first,
// as kube prunes the defaults of the schemas it serves.
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue, setOwn } from '../api/own.js';
import type { Props } from './props.js';
import { prunedDefault } from './node.js';

interface DefaultTree {
  readonly nullable: boolean;
  readonly hasDefault: boolean;
  readonly value: unknown;
  readonly properties?: ReadonlyMap<string, DefaultTree>;
  readonly additional?: DefaultTree;
  readonly items?: DefaultTree;
}

/** The defaulting tree of a schema; undefined when no default is anywhere below. */
export function compileDefaults(p: Props): DefaultTree | undefined {
  let properties: Map<string, DefaultTree> | undefined;
  for (const [k, v] of p.properties ?? []) {
    const t = compileDefaults(v);
    if (t) (properties ??= new Map()).set(k, t);
  }
  const additional = typeof p.additionalProperties === 'object' ? compileDefaults(p.additionalProperties) : undefined;
  const items = p.items && !Array.isArray(p.items) ? compileDefaults(p.items as Props) : undefined;
  const hasDefault = p.hasDefault && p.default !== null;
  if (!hasDefault && !properties && !additional && !items) return undefined;
  // Served defaults are pruned by their schema, as kube's PruneDefaults at CRD load (a legacy stored default may hold unknown fields).
  return { nullable: p.nullable === true, hasDefault, value: hasDefault ? prunedDefault(p).value : undefined, properties, additional, items };
}

function copy(v: unknown): unknown {
  return structuredClone(v);
}

const needsDefault = (v: unknown, t: DefaultTree) => t.hasDefault && v === null && !t.nullable;

/** Applies the defaults of `t` to `x` in place. */
export function applyDefaults(x: unknown, t: DefaultTree): void {
  if (isPlainObject(x)) {
    if (t.properties) {
      for (const [k, sub] of t.properties) {
        if (!sub.hasDefault) continue;
        if (!hasOwn(x, k) || needsDefault(x[k], sub)) setOwn(x, k, copy(sub.value));
      }
    }
    if (!t.properties && !t.additional) return;
    for (const k of Object.keys(x)) {
      const sub = t.properties?.get(k) ?? (t.additional && !t.properties ? t.additional : undefined);
      if (!sub) continue;
      if (needsDefault(ownValue(x, k), sub)) setOwn(x, k, copy(sub.value));
      applyDefaults(ownValue(x, k), sub);
    }
  } else if (Array.isArray(x) && t.items) {
    for (let i = 0; i < x.length; i++) {
      if (needsDefault(x[i], t.items)) x[i] = copy(t.items.value);
      applyDefaults(x[i], t.items);
    }
  }
}
