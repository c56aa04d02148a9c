// The authorization step (kube's WithAuthorization): the request's
// attributes asked of the authorizer chain; anything but an Allow is a 403,
// or a 500 when an authorizer failed with no Allow to override it. The
// decision and its reason go to the audit event.
import { forbiddenMessage, internalError, type StatusError } from '../../lib/api/status.js';
import { inSpan } from '../../lib/tracing/span.js';
import type { Attributes, Decision } from '../authz/types.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import { selectorAttributes, type SelectorAttributes } from '../authz/selectors.js';
import type { ChainConfig } from './config.js';
import type { RequestContext } from './context.js';

/** kube-apiserver's attributes of a request, from its parsed request info. */
export function attributesOf(ctx: RequestContext): Attributes {
  const i = ctx.info;
  // list/watch/deletecollection: parsed field and label selectors (and the name a metadata.name selector pins).
  const sel = i.isResourceRequest ? selectorAttributes(i.verb, ctx.query) : NO_SELECTORS;
  const attrs: Attributes = {
    user: ctx.user,
    verb: i.verb,
    isResourceRequest: i.isResourceRequest,
    path: i.path,
    apiGroup: i.apiGroup,
    apiVersion: i.apiVersion,
    namespace: i.namespace,
    resource: i.resource,
    subresource: i.subresource,
    name: i.name || (sel.name ?? ''),
  };
  // Spread only for a selector: two spreads of {} were most of this function's work on every other request.
  if (!sel.fieldSelector && !sel.labelSelector) return attrs;
  return {
    ...attrs,
    ...(sel.fieldSelector ? { fieldSelector: sel.fieldSelector } : {}),
    ...(sel.labelSelector ? { labelSelector: sel.labelSelector } : {}),
  };
}

const NO_SELECTORS: SelectorAttributes = Object.freeze({});

/** kube-apiserver's Forbidden Status, naming the object for resource requests. */
export function forbiddenStatus(ctx: RequestContext, attrs: Attributes, reason: string): StatusError {
  const i = ctx.info;
  const why = reason ? `${denial(attrs)}: ${reason}` : denial(attrs);
  return forbiddenMessage(why, i.isResourceRequest ? { name: i.name, group: i.apiGroup, kind: i.resource } : {});
}

/** A promise only when the authorizer has to wait (a cached or in-memory decision takes no promise turn). */
export function authorize(ctx: RequestContext, cfg: ChainConfig): void | Promise<void> {
  const attrs = (cfg.attributes ?? attributesOf)(ctx);
  const decision = ctx.trace
    ? inSpan(ctx.trace, 'authorization', { verb: attrs.verb }, async (span, t): Promise<Decision> => {
        // The authorizers get the span's trace (which one decided, a webhook's call).
        const d = await cfg.authorizer.authorize(attrs, t);
        span?.setAttribute('authorization.decision', d.kind === 'allow' ? 'allow' : 'forbid');
        if (d.reason) span?.setAttribute('authorization.reason', d.reason);
        return d;
      })
    : cfg.authorizer.authorize(attrs);
  if (decision instanceof Promise) return decision.then((d) => decided(ctx, cfg, attrs, d));
  decided(ctx, cfg, attrs, decision);
}

function decided(ctx: RequestContext, cfg: ChainConfig, attrs: Attributes, decision: Decision): void {
  if (ctx.audit) {
    // kube's AddAuditAnnotations: the decision and its reason, empty when the authorizer gave none (system:masters);
    // a failed authorizer without an Allow is only "internal error".
    if (decision.kind !== 'allow' && decision.error) ctx.audit.annotate('authorization.k8s.io/reason', 'internal error');
    else {
      ctx.audit.annotate('authorization.k8s.io/decision', decision.kind === 'allow' ? 'allow' : 'forbid');
      ctx.audit.annotate('authorization.k8s.io/reason', decision.reason ?? '');
    }
  }
  if (decision.kind !== 'allow') throw decision.error ? internalError(decision.error) : (cfg.forbidden ?? forbiddenStatus)(ctx, attrs, decision.reason);
}
