// Upgrade requests (Connection: Upgrade) arrive on the server's `upgrade`
// event with their socket instead of a response. The composition root runs
// them through the same pipeline with a response bound to that socket and
// records the socket here, so dispatch can forward an authorized upgrade to
// an aggregated backend. Anything else answers on the response, and the
// socket is closed after it (a failed upgrade never leaves it open).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

export interface PendingUpgrade { readonly socket: Duplex; readonly head: Buffer }

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

export function registerUpgrade(req: IncomingMessage, u: PendingUpgrade): void {
  pending.set(req, u);
}

export function upgradeOf(req: IncomingMessage): PendingUpgrade | undefined {
  return pending.get(req);
}
