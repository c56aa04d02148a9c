// The test modes AlwaysAllow and AlwaysDeny, and the system:masters bypass.
import type { Attributes, Authorizer, Decision } from './types.js';
import { NO_OPINION } from './types.js';

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const DENY: Decision = Object.freeze({ kind: 'deny', reason: 'AlwaysDeny' });

export const alwaysAllow: Authorizer = { name: 'AlwaysAllow', authorize: () => ALLOW };
export const alwaysDeny: Authorizer = { name: 'AlwaysDeny', authorize: () => DENY };

/** Members of a privileged group (system:masters) may do anything, before any mode is asked. */
export function privilegedGroups(groups: readonly string[]): Authorizer {
  const set = new Set(groups);
  const member = (a: Attributes) => a.user.groups.find((g) => set.has(g));
  return {
    name: 'privileged-groups',
    authorize: (a) => (member(a) !== undefined ? ALLOW : NO_OPINION),
    explain: (a) => {
      const group = member(a);
      return group !== undefined ? { decision: ALLOW, facts: { privileged: { group } } } : { decision: NO_OPINION };
    },
  };
}
