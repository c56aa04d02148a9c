// The test modes AlwaysAllow and AlwaysDeny, and the system:masters bypass.
import type { Attributes, Authorizer, Decision } from './types.js';
import { NO_OPINION } from './types.js';

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const DENY: Decision = Object.freeze({ kind: 'deny', reason: 'AlwaysDeny' });

export const alwaysAllow: Authorizer = {
  name: 'AlwaysAllow',
  authorize: () => ALLOW,
  // Everyone: every request is authenticated or not.
  subjects: () => ['system:authenticated', 'system:unauthenticated'].map((name) => ({ kind: 'Group' as const, name, facts: {} })),
};
export const alwaysDeny: Authorizer = { name: 'AlwaysDeny', authorize: () => DENY, subjects: () => [] };

/** Members of a privileged group (system:masters) may do anything, before any mode is asked. */
export function privilegedGroups(groups: readonly string[]): Authorizer {
  const set = new Set(groups);
  // A loop, not groups.find(callback): no closure made per request (this runs for every request).
  const member = (a: Attributes): string | undefined => {
    const gs = a.user.groups;
    for (let i = 0; i < gs.length; i++) if (set.has(gs[i]!)) return gs[i];
    return undefined;
  };
  return {
    name: 'privileged-groups',
    authorize: (a) => (member(a) !== undefined ? ALLOW : NO_OPINION),
    subjects: () => groups.map((group) => ({ kind: 'Group' as const, name: group, facts: { privileged: { group } } })),
    explain: (a) => {
      const group = member(a);
      return group !== undefined ? { decision: ALLOW, facts: { privileged: { group } } } : { decision: NO_OPINION };
    },
  };
}
