// Continue tokens pin a paged list to the revision of its first page and
// record where the next page starts. They are opaque to clients.
import { badRequest } from '../../lib/api/status.js';

export interface ContinuePoint {
  rev: number;
  after: string;
}

export function encodeContinue(rev: number, after: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: rev, start: after })).toString('base64url');
}

export function decodeContinue(token: string, prefix: string): ContinuePoint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`invalid continue token: not a token issued by this server`);
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p === null || typeof p !== 'object' || p.v !== 'meta.k8s.io/v1' || !Number.isSafeInteger(p.rv) || (p.rv as number) <= 0 || typeof p.start !== 'string') {
    throw badRequest('invalid continue token: not a token issued by this server');
  }
  if (!p.start.startsWith(prefix)) throw badRequest('invalid continue token: it belongs to a different list');
  return { rev: p.rv as number, after: p.start };
}
