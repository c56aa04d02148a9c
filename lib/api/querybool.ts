// Boolean query parameters (`watch`, `allowWatchBookmarks`, `sendInitialEvents`,
// `pretty`, `orphanDependents`, `force`, …), read the one way kube-apiserver's
// parameter codec reads them (runtime.Convert_Slice_string_To_bool): only "0"
// and "false" in any case are false; anything else, the empty string
// included, is true. Clients rely on it: the Python client sends `watch=True`.

// `u` makes `i` fold as Go's strings.EqualFold does (so "falſe" is false too).
const FALSE = /^(?:0|false)$/iu;

/** The value of the first `name` parameter, or undefined when the query has none. */
export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  return raw === null ? undefined : !FALSE.test(raw);
}
