// Column helpers shared by the built-in table printers: the Name and Age
// columns every kube printer has, and kubectl's duration rendering, so that
// `kubectl get` shows the same text against Gatehouse as against kube-apiserver.
import { rfc3339, type KObject } from '../api/meta.js';
import type { Column } from './types.js';
import { time } from './fields.js';

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const CREATION_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/**
 * apimachinery's duration.HumanDuration: two significant units at most, and
 * coarser the older the object (`90s`, `3m2s`, `15m`, `4h5m`, `20h`, `2d3h`, `30d`, `2y5d`).
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  // Up to a second in the future is clock skew between machines, not an error.
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24);
    const d = days % 365;
    return d === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${d}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kubectl's translateTimestampSince: the age of a timestamp, `<unknown>` when there is none. */
export function since(at: number | undefined, now: number): string {
  return at === undefined ? '<unknown>' : humanDuration(now - at);
}

export function nameColumn(): Column {
  return { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0, cell: (o) => o.metadata.name ?? '' };
}

export function ageColumn(): Column {
  return { name: 'Age', type: 'string', description: CREATION_DESCRIPTION, priority: 0, cell: (o, now) => since(time(o.metadata, 'creationTimestamp'), now) };
}

/** The second column of the default table (and of Roles/ClusterRoles): the creation time itself. */
export function createdAtColumn(): Column {
  return {
    name: 'Created At',
    type: 'date',
    description: CREATION_DESCRIPTION,
    priority: 0,
    cell: (o) => {
      const t = time(o.metadata, 'creationTimestamp');
      return t === undefined ? '' : rfc3339(t);
    },
  };
}

/** The table of a type without its own printer (resource-api.md, Table representation). */
export const DEFAULT_COLUMNS: readonly Column[] = Object.freeze([nameColumn(), createdAtColumn()]);

/** A plain string column; most kube printers are just a name, a description and one derived value. */
export function column(
  name: string,
  description: string,
  cell: (o: KObject, now: number) => string | number | boolean,
  opts: { priority?: 0 | 1; type?: Column['type'] } = {},
): Column {
  return { name, type: opts.type ?? 'string', description, priority: opts.priority ?? 0, cell };
}

/** `a,b,c`, or kube's placeholder when the list is empty. */
export function joinOr(items: readonly string[], none = '<none>', sep = ','): string {
  return items.length ? items.join(sep) : none;
}
