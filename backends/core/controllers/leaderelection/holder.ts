// A candidate's identity as kube-controller-manager makes it: the hostname
// and a fresh UUID, so two processes on one host (or one process restarted)
// never pass for each other.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

export function holderIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}
