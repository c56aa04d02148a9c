// The Pod table after kube's printPod (pkg/printers/internalversion): the
// Status column is the same small state machine kubectl users read every day,
// so it follows kube's order of precedence exactly.
import type { KObject } from '../../api/meta.js';
import type { Column } from '../types.js';
import { ageColumn, column, nameColumn, since } from '../columns.js';
import { at, bool, list, num, str, time } from '../fields.js';

interface PodRow {
  ready: string;
  status: string;
  restarts: string;
}

function isRestartable(c: unknown): boolean {
  return str(c, 'restartPolicy') === 'Always';
}

function hasCondition(pod: KObject, type: string): boolean {
  return list(pod, 'status', 'conditions').some((c) => str(c, 'type') === type && str(c, 'status') === 'True');
}

function exitReason(terminated: unknown, prefix: string): string {
  const reason = str(terminated, 'reason');
  if (reason) return prefix + reason;
  const signal = num(terminated, 'signal');
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${num(terminated, 'exitCode')}`;
}

function lastFinished(c: unknown): number | undefined {
  return time(c, 'lastState', 'terminated', 'finishedAt');
}

/** Computes the three derived cells once per pod and response time. */
function podRow(pod: KObject, now: number): PodRow {
  const containers = list(pod, 'spec', 'containers');
  const initSpecs = new Map(list(pod, 'spec', 'initContainers').map((c) => [str(c, 'name'), c] as const));
  const total = containers.length + [...initSpecs.values()].filter(isRestartable).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;
  const later = (a: number | undefined, b: number | undefined) => (b !== undefined && (a === undefined || b > a) ? b : a);

  let reason = str(pod, 'status', 'reason') || str(pod, 'status', 'phase');
  for (const c of list(pod, 'status', 'conditions')) {
    if (str(c, 'type') === 'PodScheduled' && str(c, 'reason') === 'SchedulingGated') reason = 'SchedulingGated';
  }

  let initializing = false;
  const initStatuses = list(pod, 'status', 'initContainerStatuses');
  for (const [i, c] of initStatuses.entries()) {
    const sidecar = isRestartable(initSpecs.get(str(c, 'name')));
    restarts += num(c, 'restartCount');
    lastRestart = later(lastRestart, lastFinished(c));
    if (sidecar) {
      sidecarRestarts += num(c, 'restartCount');
      lastSidecarRestart = later(lastSidecarRestart, lastFinished(c));
    }
    const terminated = at(c, 'state', 'terminated');
    const waitingReason = str(c, 'state', 'waiting', 'reason');
    if (terminated !== undefined && num(terminated, 'exitCode') === 0) continue;
    if (sidecar && bool(c, 'started')) {
      if (bool(c, 'ready')) ready++;
      continue;
    }
    if (terminated !== undefined) reason = exitReason(terminated, 'Init:');
    else if (waitingReason && waitingReason !== 'PodInitializing') reason = `Init:${waitingReason}`;
    else reason = `Init:${i}/${initSpecs.size}`;
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(pod, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = list(pod, 'status', 'containerStatuses');
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += num(c, 'restartCount');
      lastRestart = later(lastRestart, lastFinished(c));
      const terminated = at(c, 'state', 'terminated');
      if (str(c, 'state', 'waiting', 'reason')) reason = str(c, 'state', 'waiting', 'reason');
      else if (terminated !== undefined) reason = exitReason(terminated, '');
      else if (bool(c, 'ready') && at(c, 'state', 'running') !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    // A completed container beside a still-running one does not make the pod Completed.
    if (reason === 'Completed' && hasRunning) reason = hasCondition(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  const phase = str(pod, 'status', 'phase');
  if (pod.metadata.deletionTimestamp && str(pod, 'status', 'reason') === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart !== undefined ? `${restarts} (${since(lastRestart, now)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText };
}

// Four cells of one row read the same derived values; compute them once per object and response.
const cache = new WeakMap<KObject, { now: number; row: PodRow }>();
function row(pod: KObject, now: number): PodRow {
  const hit = cache.get(pod);
  if (hit && hit.now === now) return hit.row;
  const r = podRow(pod, now);
  cache.set(pod, { now, row: r });
  return r;
}

/** The first pod IP, as both the IP column and the status.podIP field selector read it. */
export function podIP(pod: KObject): string {
  const first = list(pod, 'status', 'podIPs')[0];
  return str(first, 'ip') || str(pod, 'status', 'podIP');
}

function readinessGates(pod: KObject): string {
  const gates = list(pod, 'spec', 'readinessGates');
  if (gates.length === 0) return '<none>';
  const conditions = list(pod, 'status', 'conditions');
  const ok = gates.filter((g) => {
    const c = conditions.find((c) => str(c, 'type') === str(g, 'conditionType'));
    return c !== undefined && str(c, 'status') === 'True';
  }).length;
  return `${ok}/${gates.length}`;
}

export const POD_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Ready', 'The aggregate readiness state of this pod for accepting traffic.', (o, now) => row(o, now).ready),
  column('Status', 'The aggregate status of the containers in this pod.', (o, now) => row(o, now).status),
  column(
    'Restarts',
    'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    (o, now) => row(o, now).restarts,
  ),
  ageColumn(),
  column('IP', 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', (o) => podIP(o) || '<none>', {
    priority: 1,
  }),
  column(
    'Node',
    'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName.',
    (o) => str(o, 'spec', 'nodeName') || '<none>',
    { priority: 1 },
  ),
  column(
    'Nominated Node',
    'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods.',
    (o) => str(o, 'status', 'nominatedNodeName') || '<none>',
    { priority: 1 },
  ),
  column('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', readinessGates, { priority: 1 }),
];
