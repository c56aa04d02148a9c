// The chain explained (access.gatehouse.dev SubjectAccessExplanation): every
// configured authorizer in order, bypass first, with its decision and what
// matched; the ones after the deciding authorizer are Skipped, not asked.
// The union of decisions is the chain's own (chain.ts Union), so the
// explanation's answer is the decision a request would get. Metrics are not
// counted: an explanation is not a decision about a request.
import { Union } from './chain.js';
import { explainOne, type Attributes, type Authorizer, type Decision, type ExplainOptions, type NearMiss, type SubjectGrant } from './types.js';

export type StepDecision = 'Allow' | 'Deny' | 'NoOpinion' | 'Error' | 'Skipped';

export interface ExplainedPart {
  /** Privileged (the system:masters bypass), or the configured type. */
  readonly type: string;
  readonly name: string;
  readonly authorizer: Authorizer;
}

export interface Step {
  readonly name: string;
  readonly type: string;
  readonly decision: StepDecision;
  readonly reason: string;
  readonly facts?: Readonly<Record<string, unknown>>;
}

export interface ChainExplanation {
  /** The chain's answer, "no opinion" kept (as `evaluate`). */
  readonly decision: Decision;
  /** The name of the authorizer that allowed or denied, if one did. */
  readonly decidedBy?: string;
  readonly steps: readonly Step[];
  readonly nearMisses: readonly NearMiss[];
}

/** At most this many near misses are reported. */
export const MAX_NEAR_MISSES = 10;

function stepDecision(d: Decision): StepDecision {
  // An authorizer that failed reports Error whatever its failure policy made of it.
  if (d.error) return 'Error';
  return d.kind === 'allow' ? 'Allow' : d.kind === 'deny' ? 'Deny' : 'NoOpinion';
}

export async function explainChain(parts: readonly ExplainedPart[], attrs: Attributes, opts?: ExplainOptions): Promise<ChainExplanation> {
  const union = new Union();
  const steps: Step[] = [];
  const nearMisses: NearMiss[] = [];
  let decidedBy: string | undefined;
  for (const p of parts) {
    if (decidedBy !== undefined) {
      steps.push({ name: p.name, type: p.type, decision: 'Skipped', reason: '' });
      continue;
    }
    const e = await explainOne(p.authorizer, attrs, opts);
    steps.push({ name: p.name, type: p.type, decision: stepDecision(e.decision), reason: e.decision.reason, ...(e.facts ? { facts: e.facts } : {}) });
    if (e.nearMisses) nearMisses.push(...e.nearMisses);
    if (union.add(e.decision)) decidedBy = p.name;
  }
  const decision = union.result();
  return {
    decision,
    ...(decidedBy !== undefined ? { decidedBy } : {}),
    steps,
    nearMisses: decision.kind === 'allow' ? [] : nearMisses.slice(0, MAX_NEAR_MISSES),
  };
}

export interface AllowedSubject {
  readonly kind: SubjectGrant['kind'];
  readonly name: string;
  readonly namespace?: string;
  /** Each authorizer (and its binding, rule, policy) that allows it, in chain order. */
  readonly allowedBy: ReadonlyArray<{ readonly name: string; readonly type: string; readonly facts: Readonly<Record<string, unknown>> }>;
}

export interface WhoCan {
  readonly subjects: readonly AllowedSubject[];
  /** Authorizers whose subjects cannot be listed, and why; empty = the list is complete. */
  readonly incomplete: ReadonlyArray<{ readonly name: string; readonly type: string; readonly reason: string }>;
}

/**
 * Who-can (SubjectsReview): every subject each authorizer of the chain allows
 * the request, bypass first. RBAC, Node and ABAC never deny, so what they
 * allow stands unless an authorizer before them denies: an AlwaysDeny ends
 * the list; a webhook (which may deny, and whose answers cannot be listed)
 * makes it incomplete.
 */
export function whoCan(parts: readonly ExplainedPart[], attrs: Attributes): WhoCan {
  const bySubject = new Map<string, { kind: SubjectGrant['kind']; name: string; namespace?: string; allowedBy: AllowedSubject['allowedBy'][number][] }>();
  const incomplete: Array<{ name: string; type: string; reason: string }> = [];
  for (const p of parts) {
    const list = p.authorizer.subjects;
    if (!list) {
      incomplete.push({
        name: p.name,
        type: p.type,
        reason: `a ${p.type} authorizer cannot list the subjects it allows; it may also deny subjects listed after it`,
      });
      continue;
    }
    for (const g of list.call(p.authorizer, attrs)) {
      const key = `${g.kind}\0${g.namespace ?? ''}\0${g.name}`;
      let entry = bySubject.get(key);
      if (!entry) bySubject.set(key, (entry = { kind: g.kind, name: g.name, ...(g.namespace !== undefined ? { namespace: g.namespace } : {}), allowedBy: [] }));
      entry.allowedBy.push({ name: p.name, type: p.type, facts: g.facts });
    }
    if (p.type === 'AlwaysDeny') break;
  }
  const order = { Group: 0, User: 1, ServiceAccount: 2 } as const;
  const subjects = [...bySubject.values()].sort(
    (x, y) => order[x.kind] - order[y.kind] || (x.namespace ?? '').localeCompare(y.namespace ?? '') || x.name.localeCompare(y.name),
  );
  return { subjects, incomplete };
}
