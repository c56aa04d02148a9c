// Admission for writes, after authorization. Plugins (NodeRestriction, RBAC
// escalation checks) join here; object validation itself belongs to the
// backend that stores the object.
import type { RequestContext } from './context.js';
import { inSpan, traceOf } from '../../lib/tracing/span.js';
import { isMutatingVerb } from '../../lib/api/verbs.js';

export interface AdmissionPlugin {
  readonly name: string;
  /** Throws a StatusError to refuse the request. */
  admit(ctx: RequestContext): void | Promise<void>;
}

/** The admission step: a promise only for a write that plugins look at. */
export function admit(plugins: readonly AdmissionPlugin[], ctx: RequestContext): Promise<void> | undefined {
  if (plugins.length === 0 || !ctx.info.isResourceRequest || !isMutatingVerb(ctx.info.verb)) return undefined;
  const trace = traceOf(ctx.req);
  if (trace) return inSpan(trace, 'admission', { 'admission.plugins': plugins.map((p) => p.name) }, () => runPlugins(plugins, ctx));
  return runPlugins(plugins, ctx);
}

async function runPlugins(plugins: readonly AdmissionPlugin[], ctx: RequestContext): Promise<void> {
  for (const p of plugins) await p.admit(ctx);
}
