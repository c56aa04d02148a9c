// kube-apiserver's /debug/api_priority_and_fairness/ dumps: dump_priority_levels
// (a row per level, by name), dump_queues (a row per queue of the levels
// that have queues) and dump_requests (a row per waiting request;
// ?includeRequestDetails=1 adds who and what), in kube's columns and layout:
// cells joined by "," and aligned as Go's text/tabwriter (minimum width 8,
// padding 1) aligns them. kube's dump_requests also lists executing
// requests (RequestIndexInQueue -1); we keep no record of those, so that a
// request with a free seat costs counters only.
import type { Dispatcher, LevelState } from './dispatcher.js';
import type { QsRequest } from './queueset.js';

export const DEBUG_PREFIX = '/debug/api_priority_and_fairness/';

/** Go's tabwriter with kube's settings: every cell but a line's last is padded to its column's width. */
export function tabwrite(rows: readonly (readonly string[])[]): string {
  const cells = rows.map((r) => r.map((c, i) => (i < r.length - 1 ? `${c},` : c)));
  const widths: number[] = [];
  for (const r of cells)
    r.forEach((c, i) => {
      if (i < r.length - 1) widths[i] = Math.max(widths[i] ?? 8, c.length + 1);
    });
  return cells.map((r) => r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('') + '\n').join('');
}

/** R as kube prints a SeatSeconds: seconds with 8 decimals and "ss". */
const seatSeconds = (x: number) => `${x.toFixed(8)}ss`;

/** Go's zero time.Time in RFC 3339: the StartTime kube prints for a request still waiting. */
const ZERO_TIME = '0001-01-01T00:00:00Z';

function levels(d: Dispatcher): LevelState[] {
  return [...d.states.values()].sort((a, b) => (a.config.name < b.config.name ? -1 : a.config.name > b.config.name ? 1 : 0));
}

export function dumpPriorityLevels(d: Dispatcher): string {
  const rows: string[][] = [
    [
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ],
  ];
  for (const s of levels(d)) {
    const qs = s.qs;
    const active = qs.queues.filter((q) => q.waiting.length > 0).length;
    rows.push([
      s.config.name,
      String(active),
      String(qs.isIdle()),
      'false',
      String(qs.requestsWaiting),
      String(qs.requestsExecuting),
      String(qs.dispatched),
      String(qs.rejected),
      String(qs.timedOut),
      String(qs.cancelled),
    ]);
  }
  return tabwrite(rows);
}

export function dumpQueues(d: Dispatcher): string {
  const rows: string[][] = [
    ['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum'],
  ];
  for (const s of levels(d)) {
    s.qs.queues.forEach((q, i) => {
      rows.push([
        s.config.name,
        String(i),
        String(q.waiting.length),
        String(q.executing),
        String(q.seatsInUse),
        seatSeconds(q.nextDispatchR),
        String(q.waitingSeats),
        String(q.waitingSeats),
        seatSeconds(q.waitingSeats * 0.003),
      ]);
    });
  }
  return tabwrite(rows);
}

export function dumpRequests(d: Dispatcher, details: boolean): string {
  const head = [
    'PriorityLevelName',
    'FlowSchemaName',
    'QueueIndex',
    'RequestIndexInQueue',
    'FlowDistingsher',
    'ArriveTime',
    'InitialSeats',
    'FinalSeats',
    'AdditionalLatency',
    'StartTime',
  ];
  const rows: string[][] = [details ? [...head, 'UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource'] : head];
  for (const s of levels(d)) {
    s.qs.queues.forEach((q, iq) => {
      q.waiting.forEach((r: QsRequest, ir) => {
        const arrived = new Date(Date.now() - (s.qs.now() - r.arrivalMs)).toISOString();
        const row = [s.config.name, r.schema, String(iq), String(ir), r.distinguisher, arrived, String(r.seats), '0', '0s', ZERO_TIME];
        const d = r.detail;
        if (details) {
          const i = d?.info;
          row.push(
            d?.user ?? '',
            i?.verb ?? '',
            i?.path ?? '',
            i?.namespace ?? '',
            i?.name ?? '',
            i ? (i.apiGroup ? `${i.apiGroup}/${i.apiVersion}` : i.apiVersion) : '',
            i?.resource ?? '',
            i?.subresource ?? '',
          );
        }
        rows.push(row);
      });
    });
  }
  return tabwrite(rows);
}

/** The dump a path names, or undefined: not one of these paths. */
export function serveDebug(d: Dispatcher, path: string, query: URLSearchParams): string | undefined {
  switch (path.slice(DEBUG_PREFIX.length)) {
    case 'dump_priority_levels':
      return dumpPriorityLevels(d);
    case 'dump_queues':
      return dumpQueues(d);
    case 'dump_requests':
      return dumpRequests(d, (query.get('includeRequestDetails') ?? '') !== '');
    default:
      return undefined;
  }
}
