// The verb table the gateway's steps share: which request-info verbs change
// stored state (kube's in-flight limit counts them apart, its metrics label
// them, admission runs on them) and which keep their request open past the
// answer's head (kube's long-running requests: no deadline, no in-flight seat).

/** Verbs that write: --max-mutating-requests-inflight, admission, the `mutating` request kind. */
const MUTATING: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export function isMutatingVerb(verb: string): boolean {
  return MUTATING.has(verb);
}

/**
 * A verb whose request is long-running by the verb alone; an upgrade request
 * (exec, attach, port-forward, websockets) is long-running whatever its verb,
 * which only the request's headers say.
 */
export function isLongRunningVerb(verb: string): boolean {
  return verb === 'watch';
}
