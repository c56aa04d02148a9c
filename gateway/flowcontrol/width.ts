// A request's width in seats, as kube's request/list_work_estimator.go: one
// seat, except a LIST (and a watch that sends its initial events), which
// takes one seat per 100 objects it is expected to walk, between 1 and the
// level's maximum (10, or fewer for a small level). The object count comes
// from an ObjectCounts source: the gateway's learns it from the core
// backend's cluster-wide lists (ListedCounts); for a resource not listed yet
// (or served elsewhere) a LIST is one seat, as kube's estimator answers for
// a resource whose count it has not seen.
import type { RequestInfo } from '../../lib/api/requestinfo.js';

export interface ObjectCounts {
  /** How many objects of the resource are stored (all namespaces), or undefined when unknown. */
  count(group: string, resource: string): number | undefined;
}

/**
 * Counts learned from the core backend's cluster-wide lists without
 * selectors (CoreEnv.onListed): each such list refreshes its resource's
 * count, as kube's storage count refreshes every minute.
 */
export class ListedCounts implements ObjectCounts {
  private readonly counts = new Map<string, number>();
  observe(group: string, resource: string, total: number): void {
    this.counts.set(`${group}/${resource}`, total);
  }
  count(group: string, resource: string): number | undefined {
    return this.counts.get(`${group}/${resource}`);
  }
}

/** kube's MaximumListSeatsLimit and ObjectsPerSeat. */
export const MAX_LIST_SEATS = 10;
const OBJECTS_PER_SEAT = 100;

/** A level's widest request: kube's min(10, ceil(NominalCL / handSize)), so that a hand of queues can hold it. */
export function maxSeatsOf(nominalCL: number, handSize: number): number {
  if (!Number.isFinite(nominalCL)) return MAX_LIST_SEATS;
  return Math.max(1, Math.min(MAX_LIST_SEATS, Math.ceil(nominalCL / Math.max(1, handSize))));
}

export function seatsOf(info: RequestInfo, query: URLSearchParams, counts: ObjectCounts | undefined, maxSeats: number): number {
  if (!counts || !info.isResourceRequest) return 1;
  const watchList = info.verb === 'watch' && query.get('sendInitialEvents') === 'true';
  if (info.verb !== 'list' && !watchList) return 1;
  const stored = counts.count(info.apiGroup, info.resource);
  if (stored === undefined) return 1;
  const limitParam = Number(query.get('limit') ?? '');
  const limit = Number.isInteger(limitParam) && limitParam > 0 && limitParam < stored ? limitParam : stored;
  const rv = query.get('resourceVersion') ?? '';
  // Served from the watch cache (kube): every stored object is looked at; from storage: a page,
  // read twice over when nothing filters it, or the whole set plus the page when a selector does.
  const fromCache = watchList || rv === '0' || (!query.get('continue') && limit === stored);
  const selective = !!(query.get('labelSelector') || query.get('fieldSelector'));
  const objects = fromCache ? stored : selective ? stored + limit : 2 * limit;
  return Math.max(1, Math.min(maxSeats, Math.ceil(objects / OBJECTS_PER_SEAT)));
}
