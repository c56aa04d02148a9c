// How one route matches a path: an exact path, a prefix (whole segments),
// a pattern (`*` and `?` as Go's path.Match, `{name}` one captured segment,
// a final `/**` any rest) or a regular expression over the whole path
// (named groups capture). Matching runs on the path decoded and checked
// once (lib/api/requestpath.ts), so `..`, `//` and encoded slashes never
// reach a matcher; a captured segment therefore never holds a `/`.
import { ConfigError } from '../../lib/config/error.js';

export type MatchKind = 'path' | 'prefix' | 'pattern' | 'regex';

export interface PathMatcher {
  readonly kind: MatchKind;
  /** The spec as written, for messages. */
  readonly spec: string;
  /** The names a match captures (pattern `{name}`, regex named groups). */
  readonly captures: readonly string[];
  /** The captures of a match (an empty object when there are none), or undefined. */
  test(path: string): Readonly<Record<string, string>> | undefined;
}

const NONE: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);
const CAPTURE = /^[A-Za-z][A-Za-z0-9]*$/;

function checkedPath(spec: string, kind: MatchKind): string {
  if (!spec.startsWith('/')) throw new ConfigError(`${kind} must begin with "/"`, { value: spec });
  if (/[?#\s]/.test(spec) && kind !== 'pattern') throw new ConfigError(`${kind} must be a path without query, fragment or spaces`, { value: spec });
  const segs = spec.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i]!;
    if (s === '.' || s === '..') throw new ConfigError(`${kind} must not hold dot segments (paths are refused with them before matching)`, { value: spec });
    if (s === '' && i !== segs.length - 1) throw new ConfigError(`${kind} must not hold empty segments ("//")`, { value: spec });
  }
  return spec;
}

function exact(spec: string): PathMatcher {
  const p = checkedPath(spec, 'path');
  return { kind: 'path', spec, captures: [], test: (path) => (path === p ? NONE : undefined) };
}

function prefix(spec: string): PathMatcher {
  // Whole segments: `/api` takes `/api` and `/api/…`, never `/apis`.
  const p = checkedPath(spec, 'prefix').replace(/\/+$/, '');
  if (p === '') return { kind: 'prefix', spec, captures: [], test: () => NONE };
  const withSlash = `${p}/`;
  return { kind: 'prefix', spec, captures: [], test: (path) => (path === p || path.startsWith(withSlash) ? NONE : undefined) };
}

function escapeRe(s: string): string {
  return s.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
}

function pattern(spec: string): PathMatcher {
  checkedPath(spec, 'pattern');
  const captures: string[] = [];
  const segs = spec.split('/').slice(1);
  let re = '';
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (seg === '**') {
      if (i !== segs.length - 1) throw new ConfigError('"**" may only be the last segment', { value: spec });
      re += '(?:/.*)?';
      continue;
    }
    re += '/';
    const named = /^\{(.*)\}$/.exec(seg);
    if (named) {
      const name = named[1]!;
      if (!CAPTURE.test(name)) throw new ConfigError(`capture "{${name}}" must be a name of letters and digits`, { value: spec });
      if (captures.includes(name)) throw new ConfigError(`capture "{${name}}" appears twice`, { value: spec });
      captures.push(name);
      re += `(?<${name}>[^/]+)`;
      continue;
    }
    if (/[{}]/.test(seg)) throw new ConfigError('a capture "{name}" must be a whole segment', { value: spec });
    for (const ch of seg) re += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : escapeRe(ch);
  }
  return regexMatcher('pattern', spec, new RegExp(`^${re || '/'}$`), captures);
}

function regex(spec: string): PathMatcher {
  let re: RegExp;
  try {
    // Anchored: the expression matches the whole path, never a part of it.
    re = new RegExp(`^(?:${spec})$`, 'u');
  } catch (err) {
    throw new ConfigError(`not a regular expression: ${err instanceof Error ? err.message : String(err)}`, { value: spec });
  }
  const captures = [...spec.matchAll(/\(\?<([A-Za-z][A-Za-z0-9]*)>/g)].map((m) => m[1]!);
  return regexMatcher('regex', spec, re, captures);
}

function regexMatcher(kind: MatchKind, spec: string, re: RegExp, captures: readonly string[]): PathMatcher {
  if (captures.length === 0) return { kind, spec, captures, test: (path) => (re.test(path) ? NONE : undefined) };
  return {
    kind,
    spec,
    captures,
    test: (path) => {
      const m = re.exec(path);
      if (!m) return undefined;
      const out = Object.create(null) as Record<string, string>;
      for (const name of captures) out[name] = m.groups?.[name] ?? '';
      return out;
    },
  };
}

export function pathMatcher(kind: MatchKind, spec: string): PathMatcher {
  switch (kind) {
    case 'path':
      return exact(spec);
    case 'prefix':
      return prefix(spec);
    case 'pattern':
      return pattern(spec);
    case 'regex':
      return regex(spec);
  }
}

/** The literal part of a prefix or pattern before its first wildcard or capture: every path it matches begins with it. */
function literalLead(m: PathMatcher): string | undefined {
  if (m.kind === 'prefix') return m.spec.replace(/\/+$/, '');
  if (m.kind !== 'pattern') return undefined;
  const cut = m.spec.search(/[*?{]/);
  if (cut < 0) return m.spec;
  // Up to the last whole segment before the wildcard.
  return m.spec.slice(0, m.spec.lastIndexOf('/', cut));
}

/**
 * Whether every path `later` matches is taken by `earlier` first (so `later`
 * can never match): an earlier route that matches a later exact path, an
 * earlier prefix that covers a later prefix or pattern, or the same spec
 * twice. Partial overlaps are the point of "first match wins" and pass.
 */
export function shadows(earlier: PathMatcher, later: PathMatcher): boolean {
  if (earlier.kind === later.kind && earlier.spec === later.spec) return true;
  if (later.kind === 'path') return earlier.test(later.spec) !== undefined;
  if (earlier.kind !== 'prefix') return false;
  const lead = literalLead(later);
  if (lead === undefined) return false;
  const p = earlier.spec.replace(/\/+$/, '');
  return p === '' || lead === p || lead.startsWith(`${p}/`);
}
