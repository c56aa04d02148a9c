// The test modes AlwaysAllow and AlwaysDeny, and the system:masters bypass.
import type { Authorizer, Decision } from './types.js';
import { NO_OPINION } from './types.js';

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });
const DENY: Decision = Object.freeze({ kind: 'deny', reason: 'AlwaysDeny' });

export const alwaysAllow: Authorizer = { name: 'AlwaysAllow', authorize: () => ALLOW };
export const alwaysDeny: Authorizer = { name: 'AlwaysDeny', authorize: () => DENY };

/** Members of a privileged group (system:masters) may do anything, before any mode is asked. */
export function privilegedGroups(groups: readonly string[]): Authorizer {
  const set = new Set(groups);
  return {
    name: 'privileged-groups',
    authorize: (a) => (a.user.groups.some((g) => set.has(g)) ? ALLOW : NO_OPINION),
  };
}
