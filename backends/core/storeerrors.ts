// Translates StoreError codes into client-facing Status errors, at the
// boundary between the store and the API.
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  internalError,
  notFound,
  serviceUnavailable,
  tooLargeResourceVersion,
  STALE_OBJECT,
  StatusError,
  type GroupResource,
} from '../../lib/api/status.js';
import { StoreError } from './store/types.js';

export function fromStoreError(err: unknown, gr: GroupResource, name: string, requestedRev?: number): unknown {
  if (!(err instanceof StoreError)) return err;
  switch (err.code) {
    case 'not-found':
      return notFound(gr, name);
    case 'exists':
      return alreadyExists(gr, name);
    case 'conflict':
      return conflict(gr, name, STALE_OBJECT);
    case 'gone':
      return expired(requestedRev !== undefined ? `too old resource version: ${requestedRev} (${err.currentRev ?? 0})` : err.message);
    case 'too-large':
      return tooLargeResourceVersion(requestedRev ?? 0, err.currentRev ?? 0);
    case 'unreachable':
      return serviceUnavailable(`storage is unavailable: ${err.message}`);
    case 'corrupt':
      return internalError(err.message); // names the key (kube's corrupt-object StorageError wording)
    case 'invalid':
      return badRequest(err.message);
    case 'entity-too-large':
      // What kube-apiserver answers for etcd's refusal: a 500 with etcd's message and no reason (kubernetes#112152).
      return new StatusError(500, undefined, err.message);
  }
}

/** What a failed store call throws: its Status error. */
export function storeFailure(err: unknown, gr: GroupResource, name: string, requestedRev?: number): Error {
  const e = fromStoreError(err, gr, name, requestedRev);
  return e instanceof StatusError || e instanceof Error ? e : new Error(String(e));
}

/** Runs a store call and rethrows its failure as a Status error. */
export async function storeCall<T>(gr: GroupResource, name: string, fn: () => Promise<T>, requestedRev?: number): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw storeFailure(err, gr, name, requestedRev);
  }
}
