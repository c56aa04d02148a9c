// Node agents are users named system:node:<name> in the group system:nodes
// (kube's nodeidentifier.NodeIdentity).
import type { UserInfo } from '../api/meta.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** The node name ('' for a node whose name is unknown), or undefined when the user is not a node agent. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}
