// A grant in the explanations' terms (access.gatehouse.dev RbacMatch): the
// binding, its role, the rule's index and the subject that made it apply.
// Shared by the authorizer's explanation, its near misses and who-can.
import type { Grant } from './policy.js';

export function grantFacts(g: Grant, ruleIndex: number): Record<string, unknown> {
  const b = g.binding;
  const s = g.subject;
  return {
    binding: { kind: b.kind, ...(b.namespace ? { namespace: b.namespace } : {}), name: b.name },
    role: { kind: b.roleRef.kind, ...(b.roleRef.kind === 'Role' ? { namespace: b.namespace } : {}), name: b.roleRef.name },
    ruleIndex,
    subject: { kind: s.kind, ...(s.kind === 'ServiceAccount' ? { namespace: s.namespace || b.namespace } : {}), name: s.name },
  };
}
