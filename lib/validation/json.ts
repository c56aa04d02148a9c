// JSON decoding that reports duplicate keys (a plain JSON.parse keeps the
// last one silently) and bounds nesting depth.
//
// Fast path: JSON.parse, plus counts of the text's brackets and colons (native
// indexOf) set against the parsed value's keys; when a string holds a colon,
// one pass over the text counts object members (colons outside strings) and
// the deepest nesting. When the parsed value holds as many keys as the text
// has members, no key repeated. Only when the counts differ does the slow
// tokenizer run, to name the paths.
import { isPlainObject } from '../api/meta.js';

export class JsonBodyError extends Error {
  constructor(
    readonly code: 'syntax' | 'depth',
    message: string,
  ) {
    super(message);
    this.name = 'JsonBodyError';
  }
}

export interface DecodedJson {
  readonly value: unknown;
  /** Paths of repeated keys (`metadata.name`, `spec.containers[0].name`), in text order. */
  readonly duplicates: readonly string[];
}

/** Default nesting limit of request bodies; Kubernetes objects stay far below it. */
export const MAX_DEPTH = 64;

const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  COLON = 0x3a,
  OPEN_BRACE = 0x7b,
  CLOSE_BRACE = 0x7d,
  OPEN_BRACKET = 0x5b,
  CLOSE_BRACKET = 0x5d;

/** Members (key/value pairs) in the text and its deepest nesting. */
function scan(text: string): { members: number; depth: number } {
  let members = 0;
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === COLON) members++;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) max = depth;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { members, depth: max };
}

/**
 * The index of the quote closing the string opened at `open` (the text's length when none):
 * the next quote preceded by an even run of backslashes. indexOf skips the string's characters
 * natively: a ConfigMap body's decode 25.5k → 20.6k instructions (docs/decisions/2026-11-29-create-cpu-cuts.md).
 */
function stringEnd(text: string, open: number): number {
  for (let j = text.indexOf('"', open + 1); j >= 0; j = text.indexOf('"', j + 1)) {
    let b = j - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((j - 1 - b) % 2 === 0) return j;
  }
  return text.length;
}

function countKeys(v: unknown): number {
  if (Array.isArray(v)) {
    let n = 0;
    for (const x of v) if (typeof x === 'object' && x !== null) n += countKeys(x);
    return n;
  }
  if (isPlainObject(v)) {
    let n = 0;
    for (const k in v) {
      n++;
      const x = v[k];
      if (typeof x === 'object' && x !== null) n += countKeys(x);
    }
    return n;
  }
  return 0;
}

/** Occurrences of `c` in `text`, counted up to `limit` + 1 (indexOf searches natively). */
function occurrences(text: string, c: string, limit: number): number {
  let n = 0;
  for (let i = text.indexOf(c); i >= 0 && n <= limit; i = text.indexOf(c, i + 1)) n++;
  return n;
}

export function decodeJson(text: string, maxDepth = MAX_DEPTH): DecodedJson {
  // Fast path, without scan's walk of the text: with at most maxDepth brackets the text cannot nest
  // deeper; when its colons (members, plus any inside strings) are as many as the parsed value's keys,
  // no key repeated. A ConfigMap create's decode: 25.5k → 18.1k instructions, JSON.parse alone 14.2k
  // (docs/decisions/2026-11-29-create-cpu-cuts.md). Otherwise (a colon in a string) scan counts exactly.
  const opens = occurrences(text, '{', maxDepth);
  if (opens <= maxDepth && opens + occurrences(text, '[', maxDepth - opens) <= maxDepth) {
    const value = parse(text);
    const keys = countKeys(value);
    if (occurrences(text, ':', keys) === keys || keys === scan(text).members) return { value, duplicates: [] };
    return { value, duplicates: findDuplicates(text) };
  }
  const { members, depth } = scan(text);
  if (depth > maxDepth) throw new JsonBodyError('depth', `the body nests deeper than ${maxDepth} levels`);
  const value = parse(text);
  if (countKeys(value) === members) return { value, duplicates: [] };
  return { value, duplicates: findDuplicates(text) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new JsonBodyError('syntax', err instanceof Error ? err.message.split('\n', 1)[0]! : String(err));
  }
}

/** The slow path: a tokenizer that tracks the path of every key. Only runs on valid JSON. */
export function findDuplicates(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    for (i++; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') break;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const k = str();
        if (seen.has(k)) out.push(join(path, k));
        seen.add(k);
        ws();
        i++; // colon
        value(join(path, k));
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`);
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    }
  };
  value('');
  return out;
}
