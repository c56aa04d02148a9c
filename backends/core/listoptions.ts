// Parses and validates the query of get, list and watch requests into a
// read plan, cell by cell after the spec's resourceVersion tables.
import { badRequest, cause, invalid, type StatusCause } from '../../lib/api/status.js';
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';
import { labelJsonCheck, parseFieldSelector, parseLabelSelector, matchesLabels } from '../../lib/api/selectors.js';
import { decodeContinue, type ContinuePoint } from './continuetoken.js';
import { ownValue } from '../../lib/api/own.js';
import { queryBool } from '../../lib/api/querybool.js';

/** How a read is served: the newest state, any state, at least a revision, exactly a revision, or a continuation. */
export type ReadPlan =
  | { kind: 'most-recent' }
  | { kind: 'any' }
  | { kind: 'not-older-than'; rev: number }
  | { kind: 'exact'; rev: number }
  | { kind: 'continue'; point: ContinuePoint };

type Pred = (obj: KObject) => boolean;

/** The selectors of a read split by what a version conversion may change (see selection.ts). */
export interface Selection {
  /** metadata.name and metadata.namespace: the same in every version. */
  readonly identity?: Pred;
  /** Labels and other fields: to be read in the request's version. */
  readonly content?: Pred;
  /** A necessary condition of the label selector on an object's stored JSON (selectors.ts labelJsonCheck). */
  readonly mayMatchJson?: (json: Buffer) => boolean;
}

export interface ListRequest {
  plan: ReadPlan;
  limit: number;
  filter?: Pred;
  selection: Selection;
  hasSelectors: boolean;
}

export interface WatchRequest {
  /** undefined = start with the current state as synthetic ADDED events. */
  fromRev?: number;
  /** Whether to send the synthetic initial state. */
  initialEvents: boolean;
  /** The initial state must be at least this revision (sendInitialEvents with a version). */
  minRev?: number;
  /** sendInitialEvents mode: end the initial state with an annotated bookmark. */
  initialEventsEndBookmark: boolean;
  bookmarks: boolean;
  timeoutSeconds?: number;
  filter?: Pred;
  selection: Selection;
}

const LIST_OPTIONS = { group: 'meta.k8s.io', kind: 'ListOptions' };

export function parseRevision(raw: string): number {
  if (!/^[0-9]{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw badRequest(`invalid resourceVersion "${raw}": must be a decimal integer`);
  }
  return Number(raw);
}

function parseIntParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?[0-9]{1,15}$/.test(raw)) throw badRequest(`invalid value "${raw}" for ${name}: must be an integer`);
  return Number(raw);
}

function all(tests: readonly Pred[]): Pred | undefined {
  if (tests.length === 0) return undefined;
  if (tests.length === 1) return tests[0];
  return (o) => tests.every((f) => f(o));
}

function both(a: Pred | undefined, b: Pred | undefined): Pred | undefined {
  return a && b ? (o) => a(o) && b(o) : (a ?? b);
}

/** The label and field selectors of a request (unknown field labels are a 400), split into identity (name, namespace) and content tests. */
export function buildSelection(t: ResourceType, query: URLSearchParams, name?: string): Selection {
  const identity: Pred[] = [];
  const content: Pred[] = [];
  let mayMatchJson: ((json: Buffer) => boolean) | undefined;
  const ls = query.get('labelSelector');
  if (ls) {
    let sel;
    try {
      sel = parseLabelSelector(ls);
    } catch (err) {
      throw badRequest(`invalid labelSelector: ${(err as Error).message}`);
    }
    content.push((o) => matchesLabels(sel, o.metadata.labels ?? {}));
    mayMatchJson = labelJsonCheck(sel);
  }
  const fs = query.get('fieldSelector');
  if (fs) {
    let reqs;
    try {
      reqs = parseFieldSelector(fs);
    } catch (err) {
      throw badRequest(`invalid fieldSelector: ${(err as Error).message}`);
    }
    for (const r of reqs) {
      const read = fieldReader(t, r.field);
      if (!read) throw badRequest(`field label not supported: ${r.field}`);
      const want = r.value;
      const test: Pred = r.operator === '!=' ? (o) => read(o) !== want : (o) => read(o) === want;
      (r.field === 'metadata.name' || r.field === 'metadata.namespace' ? identity : content).push(test);
    }
  }
  if (name) identity.push((o) => o.metadata.name === name);
  const i = all(identity);
  const c = all(content);
  return { ...(i ? { identity: i } : {}), ...(c ? { content: c } : {}), ...(mayMatchJson ? { mayMatchJson } : {}) };
}

function fieldReader(t: ResourceType, field: string): ((o: KObject) => string) | undefined {
  if (field === 'metadata.name') return (o) => o.metadata.name ?? '';
  if (field === 'metadata.namespace') return (o) => o.metadata.namespace ?? '';
  return ownValue(t.fieldSelectors, field) as ((o: KObject) => string) | undefined;
}

function rvmOf(query: URLSearchParams, causes: StatusCause[]): 'Exact' | 'NotOlderThan' | undefined {
  const rvm = query.get('resourceVersionMatch');
  if (rvm === null || rvm === '') return undefined;
  if (rvm === 'Exact' || rvm === 'NotOlderThan') return rvm;
  causes.push(cause.notSupported('resourceVersionMatch', rvm, ['Exact', 'NotOlderThan']));
  return undefined;
}

export function parseListRequest(t: ResourceType, query: URLSearchParams, prefix: string): ListRequest {
  const causes: StatusCause[] = [];
  const rvRaw = query.get('resourceVersion') ?? '';
  const rvm = rvmOf(query, causes);
  const limit = Math.max(0, parseIntParam(query, 'limit') ?? 0);
  // Part of ListOptions for a list too (kube decodes it for every list): a bad value is refused, not ignored.
  parseIntParam(query, 'timeoutSeconds');
  const token = query.get('continue') ?? '';
  const selection = buildSelection(t, query);
  const filter = both(selection.identity, selection.content);
  const hasSelectors = !!(query.get('labelSelector') || query.get('fieldSelector'));
  let plan: ReadPlan | undefined;
  if (token) {
    if (rvRaw !== '' && rvRaw !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    if (rvm) causes.push(cause.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (causes.length === 0) plan = { kind: 'continue', point: decodeContinue(token, prefix) };
  } else if (rvm === 'Exact') {
    if (rvRaw === '') causes.push(cause.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    else if (rvRaw === '0') causes.push(cause.forbidden('resourceVersionMatch', 'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"'));
    else plan = { kind: 'exact', rev: parseRevision(rvRaw) };
  } else if (rvm === 'NotOlderThan') {
    if (rvRaw === '') causes.push(cause.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    else if (rvRaw === '0') plan = { kind: 'any' };
    else plan = { kind: 'not-older-than', rev: parseRevision(rvRaw) };
  } else if (causes.length === 0) {
    if (rvRaw === '') plan = { kind: 'most-recent' };
    else if (rvRaw === '0') plan = { kind: 'any' };
    else plan = limit > 0 ? { kind: 'exact', rev: parseRevision(rvRaw) } : { kind: 'not-older-than', rev: parseRevision(rvRaw) };
  }
  if (causes.length > 0 || !plan) throw invalid(LIST_OPTIONS, '', causes);
  return { plan, limit, hasSelectors, selection, ...(filter ? { filter } : {}) };
}

export function parseWatchRequest(t: ResourceType, query: URLSearchParams, name: string): WatchRequest {
  const causes: StatusCause[] = [];
  const rvRaw = query.get('resourceVersion') ?? '';
  const rvm = rvmOf(query, causes);
  const bookmarks = queryBool(query, 'allowWatchBookmarks') ?? false;
  const sendInitial = queryBool(query, 'sendInitialEvents');
  const timeoutSeconds = parseIntParam(query, 'timeoutSeconds');
  const selection = buildSelection(t, query, name || undefined);
  const filter = both(selection.identity, selection.content);
  if (query.get('continue')) causes.push(cause.forbidden('continue', 'continue is forbidden for watch'));
  let req: WatchRequest | undefined;
  const base = { bookmarks, selection, ...(timeoutSeconds !== undefined && timeoutSeconds > 0 ? { timeoutSeconds } : {}), ...(filter ? { filter } : {}) };
  if (sendInitial !== undefined) {
    if (rvm !== 'NotOlderThan') causes.push(cause.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (sendInitial && !bookmarks) causes.push(cause.forbidden('allowWatchBookmarks', 'sendInitialEvents requires setting allowWatchBookmarks to true'));
    if (causes.length === 0) {
      if (sendInitial) {
        req = { ...base, initialEvents: true, initialEventsEndBookmark: true, ...(rvRaw && rvRaw !== '0' ? { minRev: parseRevision(rvRaw) } : {}) };
      } else {
        req = { ...base, initialEvents: false, initialEventsEndBookmark: false, ...(rvRaw && rvRaw !== '0' ? { fromRev: parseRevision(rvRaw) } : {}) };
      }
    }
  } else if (rvm) {
    causes.push(cause.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
  } else if (causes.length === 0) {
    req =
      rvRaw === '' || rvRaw === '0'
        ? { ...base, initialEvents: true, initialEventsEndBookmark: false }
        : { ...base, initialEvents: false, initialEventsEndBookmark: false, fromRev: parseRevision(rvRaw) };
  }
  if (causes.length > 0 || !req) throw invalid(LIST_OPTIONS, '', causes);
  return req;
}
