// Key layout of the Redis store. Every key of one revision domain carries the
// same hash tag, so one Lua script may touch all of them (one slot in a
// Redis Cluster). Standalone Redis uses one domain for the whole prefix, so
// revisions order every write; see README.md for the cluster layout.
//
//   {<prefix>}:rev            string   the domain's revision counter
//   {<prefix>}:feed           stream   one entry per write, id `<rev>-0`: k, t, o | d
//   {<prefix>}:types          set      type prefixes that ever held an object
//   {<prefix>}:o:<type>       hash     key → `<rev> <json without resourceVersion>`
//   {<prefix>}:i:<type>       zset     keys of the type, score 0 (lexicographic order)

export interface RedisKeys {
  /** The hash-tagged stem every key starts with. */
  readonly stem: string;
  readonly rev: string;
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

export function redisKeys(prefix: string): RedisKeys {
  const problem = prefixProblem(prefix);
  if (problem) throw new Error(`invalid storage prefix "${prefix}": ${problem}`);
  const stem = `{${prefix}}`;
  return {
    stem,
    rev: `${stem}:rev`,
    feed: `${stem}:feed`,
    types: `${stem}:types`,
    objectsStem: `${stem}:o:`,
    indexStem: `${stem}:i:`,
  };
}

/** The SCAN pattern matching every key of a prefix (tests and tools clean up with it). */
export function prefixPattern(prefix: string): string {
  return `\\{${prefix}\\}:*`;
}
