// The Kubernetes regex library (k8s.io/apiserver/pkg/cel/library/regex.go):
// `<string>.find(pattern)` (the first match, '' when none) and
// `<string>.findAll(pattern[, limit])` (the matches, in order). Patterns come
// from clients, so they run on re2js (RE2: linear time), never on RegExp;
// @bufbuild/re2, which `matches` uses, has no find API.
import { celMethod, celList, CelScalar, type CelFunc } from '@bufbuild/cel';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { Expr } from './ast.js';
import { charge } from './meter.js';

const { STRING, INT } = CelScalar;

/** Patterns longer than this are compiled per call, never kept (as for `matches`, environment.ts). */
const MAX_CACHED_PATTERN = 4096;
// A sibling of the `matches` cache: that one holds @bufbuild/re2 programs, which cannot find.
const compiled = new LRUCache<string, RE2JS>({ max: 1024 });

/** The compiled pattern; kube's `Illegal regex: …` (Go's regexp error text, which re2js shares) when it does not compile. */
function compile(pattern: string): RE2JS {
  const hit = compiled.get(pattern);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new Error(`Illegal regex: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (pattern.length <= MAX_CACHED_PATTERN) compiled.set(pattern, re);
  return re;
}

/**
 * Go's Regexp.FindAllString: successive non-overlapping matches, at most
 * `limit` (all when negative); an empty match right after the previous match
 * is skipped, and after an empty match the search moves on by one code point.
 */
export function findAll(s: string, pattern: string, limit: number): string[] {
  // Compiled first: a bad pattern fails even with a limit of 0, as in kube.
  const m = compile(pattern).matcher(s);
  const out: string[] = [];
  let prevEnd = -1;
  for (let pos = 0; pos <= s.length && (limit < 0 || out.length < limit);) {
    if (!m.find(pos)) break;
    const start = m.start();
    const end = m.end();
    let accept = true;
    if (end === pos) {
      if (start === prevEnd) accept = false;
      pos += pos < s.length ? String.fromCodePoint(s.codePointAt(pos)!).length : 1;
    } else {
      pos = end;
    }
    prevEnd = end;
    if (accept) out.push(s.slice(start, end));
    // Free (kube charges the call once, after it returns), but it lets the meter read its
    // clock: a 3 MiB string has room for 3M matches, seconds of work within kube's cost limit.
    charge(0);
  }
  return out;
}

/** Go's Regexp.FindString: the leftmost match, '' when none (indistinguishable from an empty match, as in kube). */
export function find(s: string, pattern: string): string {
  const m = compile(pattern).matcher(s);
  return m.find(0) ? s.slice(m.start(), m.end()) : '';
}

/**
 * The error of the first `find`/`findAll` whose pattern is a constant that
 * does not compile (Go's words, without kube's `Illegal regex:`): kube
 * compiles constant patterns when it builds the program (cel-go's regex
 * optimisation), so such a rule is refused at CRD write, not per object.
 */
export function constantPatternError(root: Expr): string | undefined {
  const visit = (e: Expr | undefined): string | undefined => {
    if (!e) return undefined;
    const k = e.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return visit(k.value.operand);
      case 'callExpr': {
        const c = k.value;
        const p = c.args[0]?.exprKind;
        if ((c.function === 'find' || c.function === 'findAll') && c.target && p?.case === 'constExpr' && p.value.constantKind.case === 'stringValue') {
          try {
            compile(p.value.constantKind.value);
          } catch (err) {
            return (err as Error).message.replace(/^Illegal regex: /, '');
          }
        }
        return visit(c.target) ?? c.args.reduce<string | undefined>((found, a) => found ?? visit(a), undefined);
      }
      case 'listExpr':
        return k.value.elements.reduce<string | undefined>((found, a) => found ?? visit(a), undefined);
      case 'structExpr':
        return k.value.entries.reduce<string | undefined>(
          (found, en) => found ?? (en.keyKind.case === 'mapKey' ? visit(en.keyKind.value) : undefined) ?? visit(en.value),
          undefined,
        );
      case 'comprehensionExpr': {
        const c = k.value;
        return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].reduce<string | undefined>((found, a) => found ?? visit(a), undefined);
      }
      default:
        return undefined;
    }
  };
  return visit(root);
}

export const regexFunctions: readonly CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (this: string, pattern: string) {
    return find(this, pattern);
  }),
  celMethod('findAll', STRING, [STRING], CelScalar.DYN, function (this: string, pattern: string) {
    return celList(findAll(this, pattern, -1));
  }),
  celMethod('findAll', STRING, [STRING, INT], CelScalar.DYN, function (this: string, pattern: string, limit: bigint) {
    // Go converts the int64 limit to int: on 64-bit every value keeps its sign.
    return celList(findAll(this, pattern, limit < 0n ? -1 : limit > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(limit)));
  }),
];
