// Key layout of the Redis store. The keys are grouped in revision domains:
// every key of one domain carries the same hash tag, so one Lua script may
// touch all of them (one slot in a Redis Cluster), and each domain has its
// own revision counter and change feed.
//
// Standalone Redis: one domain for the whole prefix (tag `{<prefix>}`), so
// one counter orders every write of every type. Redis Cluster: one domain
// per resource type (tag `{<prefix>:<type>}`, e.g. `{gatehouse:core/pods/}`),
// so types spread over the shards; see README.md for what that means for
// ordering across types.
//
//   <tag>:rev            string   the domain's revision allocator (may be raised above :last)
//   <tag>:last           string   revision of the domain's newest write (cluster; standalone: = :rev)
//   <tag>:feed           stream   one entry per write, id `<rev>-0`: k, t, p (previous rev), o | d
//   <tag>:types          set      type prefixes that ever held an object in this domain
//   <tag>:o:<type>       hash     key → `<rev> <json with resourceVersion "">`
//   <tag>:i:<type>       zset     keys of the type, score 0 (lexicographic order)
//   {<prefix>}:types     set      (cluster) every type that has a domain: how processes find them

export interface RedisKeys {
  /** The hash-tagged stem every key of the domain starts with. */
  readonly stem: string;
  readonly rev: string;
  /** Same key as rev in the standalone layout. */
  readonly last: string;
  readonly feed: string;
  readonly types: string;
  /** Stems of the per-type keys: append the type prefix. */
  readonly objectsStem: string;
  readonly indexStem: string;
}

/** Problems with a storage prefix, as a message detail, or undefined when it is usable. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix === '') return 'must not be empty';
  if (/[{}\s*?[\]\\]/.test(prefix)) return 'must not contain braces, spaces or glob characters';
  return undefined;
}

function checked(prefix: string): string {
  const problem = prefixProblem(prefix);
  if (problem) throw new Error(`invalid storage prefix "${prefix}": ${problem}`);
  return prefix;
}

function layout(stem: string, last: string): RedisKeys {
  return {
    stem,
    rev: `${stem}:rev`,
    last,
    feed: `${stem}:feed`,
    types: `${stem}:types`,
    objectsStem: `${stem}:o:`,
    indexStem: `${stem}:i:`,
  };
}

/** The standalone layout: one domain for the whole prefix. */
export function redisKeys(prefix: string): RedisKeys {
  const stem = `{${checked(prefix)}}`;
  return layout(stem, `${stem}:rev`);
}

/** The cluster layout: the domain of one type prefix (`core/pods/`). */
export function typeKeys(prefix: string, type: string): RedisKeys {
  const stem = `{${checked(prefix)}:${type}}`;
  return layout(stem, `${stem}:last`);
}

/** (Cluster) the set of types that have a domain, in the prefix's own slot. */
export function registryKey(prefix: string): string {
  return `{${checked(prefix)}}:types`;
}

/**
 * The SCAN pattern matching every key of a prefix in either layout (tests and
 * tools clean up with it). It also matches a longer prefix that starts with
 * `<prefix>:`; filter with isPrefixKey.
 */
export function prefixPattern(prefix: string): string {
  return `\\{${prefix}[}:]*`;
}

/** Whether a key belongs to the prefix (either layout). */
export function isPrefixKey(prefix: string, key: string): boolean {
  if (key.startsWith(`{${prefix}}`)) return true;
  if (!key.startsWith(`{${prefix}:`)) return false;
  const type = key.slice(prefix.length + 2, key.indexOf('}'));
  return /^[^/:}]+\/[^/:}]+\/$/.test(type);
}
