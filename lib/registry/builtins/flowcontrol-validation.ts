// Defaults and validation of flowcontrol.apiserver.k8s.io/v1 objects, after
// kube's pkg/apis/flowcontrol/v1 defaults and pkg/apis/flowcontrol/validation:
// the fields the dispatcher reads are checked here so that a stored object
// always means one thing to it.
import type { KObject } from '../../api/meta.js';
import { isPlainObject } from '../../api/meta.js';
import { ownValue, setOwn } from '../../api/own.js';
import { cause, type StatusCause } from '../../api/status.js';
import { at, list, str } from '../fields.js';

const DISTINGUISHERS = ['ByUser', 'ByNamespace'];
const SUBJECT_KINDS = ['ServiceAccount', 'Group', 'User'];
const PL_TYPES = ['Exempt', 'Limited'];
const LIMIT_RESPONSES = ['Queue', 'Reject'];

/** The object at `path`, created empty when absent (only for our own, fixed keys). */
function child(obj: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const v = ownValue(obj, key);
  if (v === undefined) {
    const made: Record<string, unknown> = {};
    setOwn(obj, key, made);
    return made;
  }
  return isPlainObject(v) ? v : undefined;
}

/** kube's v1 SetDefaults_FlowSchemaSpec: matchingPrecedence 0 means 1000. */
export function defaultFlowSchema(obj: KObject): void {
  const spec = isPlainObject(obj['spec']) ? obj['spec'] : undefined;
  if (spec && (spec['matchingPrecedence'] === undefined || spec['matchingPrecedence'] === 0)) spec['matchingPrecedence'] = 1000;
}

/** kube's v1 defaults: Limited levels get 30 shares and 64 queues of 50 with hands of 8; lendablePercent 0. */
export function defaultPriorityLevel(obj: KObject): void {
  const spec = isPlainObject(obj['spec']) ? obj['spec'] : undefined;
  if (!spec) return;
  if (spec['type'] === 'Exempt' && isPlainObject(spec['exempt'])) {
    const e = spec['exempt'];
    if (e['nominalConcurrencyShares'] === undefined) e['nominalConcurrencyShares'] = 0;
    if (e['lendablePercent'] === undefined) e['lendablePercent'] = 0;
  }
  if (spec['type'] !== 'Limited' || !isPlainObject(spec['limited'])) return;
  const l = spec['limited'];
  if (l['nominalConcurrencyShares'] === undefined) l['nominalConcurrencyShares'] = 30;
  if (l['lendablePercent'] === undefined) l['lendablePercent'] = 0;
  const lr = child(l, 'limitResponse');
  if (!lr) return;
  if (lr['type'] === undefined) lr['type'] = 'Reject';
  if (lr['type'] !== 'Queue') return;
  const q = child(lr, 'queuing');
  if (!q) return;
  if (!q['queues']) q['queues'] = 64;
  if (!q['handSize']) q['handSize'] = 8;
  if (!q['queueLengthLimit']) q['queueLengthLimit'] = 50;
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** A non-empty list of strings; '' is an item only where it means something (the core API group). */
function nonEmptyStrings(out: StatusCause[], field: string, v: unknown, what: string, emptyItemOk = false): void {
  if (!Array.isArray(v) || v.length === 0) {
    out.push(cause.required(field, `${what} must contain at least one value`));
    return;
  }
  v.forEach((s, i) => {
    if (typeof s !== 'string' || (s === '' && !emptyItemOk)) out.push(cause.required(`${field}[${i}]`));
  });
}

function validateSubject(out: StatusCause[], s: unknown, f: string): void {
  const kind = str(s, 'kind');
  if (!SUBJECT_KINDS.includes(kind)) {
    out.push(cause.notSupported(`${f}.kind`, kind, SUBJECT_KINDS));
    return;
  }
  if (kind === 'User' && str(s, 'user', 'name') === '') out.push(cause.required(`${f}.user.name`, 'username is required'));
  if (kind === 'Group' && str(s, 'group', 'name') === '') out.push(cause.required(`${f}.group.name`, 'group name is required'));
  if (kind === 'ServiceAccount') {
    if (str(s, 'serviceAccount', 'name') === '') out.push(cause.required(`${f}.serviceAccount.name`, 'service account name is required'));
    if (str(s, 'serviceAccount', 'namespace') === '') out.push(cause.required(`${f}.serviceAccount.namespace`, 'service account namespace is required'));
  }
}

export function validateFlowSchema(obj: KObject): StatusCause[] {
  const out: StatusCause[] = [];
  const mp = at(obj, 'spec', 'matchingPrecedence');
  if (!isInt(mp) || mp < 1 || mp > 10000) out.push(cause.invalid('spec.matchingPrecedence', mp, 'must be between 1 and 10000 inclusively'));
  if (str(obj, 'spec', 'priorityLevelConfiguration', 'name') === '')
    out.push(cause.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  const dm = at(obj, 'spec', 'distinguisherMethod');
  if (dm !== undefined && dm !== null && !DISTINGUISHERS.includes(str(dm, 'type')))
    out.push(cause.notSupported('spec.distinguisherMethod.type', str(dm, 'type'), DISTINGUISHERS));
  list(obj, 'spec', 'rules').forEach((rule, i) => {
    const f = `spec.rules[${i}]`;
    const subjects = list(rule, 'subjects');
    if (subjects.length === 0) out.push(cause.required(`${f}.subjects`, 'subjects must contain at least one value'));
    subjects.forEach((s, j) => validateSubject(out, s, `${f}.subjects[${j}]`));
    const rr = list(rule, 'resourceRules');
    const nr = list(rule, 'nonResourceRules');
    if (rr.length === 0 && nr.length === 0) out.push(cause.required(f, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
    rr.forEach((r, j) => {
      const g = `${f}.resourceRules[${j}]`;
      nonEmptyStrings(out, `${g}.verbs`, at(r, 'verbs'), 'verbs');
      nonEmptyStrings(out, `${g}.apiGroups`, at(r, 'apiGroups'), 'resource rules must supply at least one api group', true);
      nonEmptyStrings(out, `${g}.resources`, at(r, 'resources'), 'resource rules must supply at least one resource');
      if (at(r, 'clusterScope') !== true && list(r, 'namespaces').length === 0) {
        out.push(cause.required(`${g}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
      }
    });
    nr.forEach((r, j) => {
      const g = `${f}.nonResourceRules[${j}]`;
      nonEmptyStrings(out, `${g}.verbs`, at(r, 'verbs'), 'verbs');
      nonEmptyStrings(out, `${g}.nonResourceURLs`, at(r, 'nonResourceURLs'), 'nonResourceURLs');
    });
  });
  return out;
}

export function validatePriorityLevel(obj: KObject): StatusCause[] {
  const out: StatusCause[] = [];
  const type = str(obj, 'spec', 'type');
  if (!PL_TYPES.includes(type)) {
    out.push(cause.notSupported('spec.type', type, PL_TYPES));
    return out;
  }
  const name = obj.metadata.name ?? '';
  if (name === 'exempt' && type !== 'Exempt') out.push(cause.invalid('spec.type', type, 'type must be "Exempt" if and only if name is "exempt"'));
  if (name !== 'exempt' && type === 'Exempt') out.push(cause.invalid('spec.type', type, 'type must be "Exempt" if and only if name is "exempt"'));
  if (type === 'Exempt') {
    if (at(obj, 'spec', 'limited') !== undefined) out.push(cause.forbidden('spec.limited', 'must be nil if the type is not Limited'));
    return out;
  }
  if (at(obj, 'spec', 'exempt') !== undefined) out.push(cause.forbidden('spec.exempt', 'must be nil if the type is Limited'));
  const l = at(obj, 'spec', 'limited');
  if (!isPlainObject(l)) {
    out.push(cause.required('spec.limited', 'must not be empty when type is Limited'));
    return out;
  }
  const ncs = l['nominalConcurrencyShares'];
  if (!isInt(ncs) || ncs < 0) out.push(cause.invalid('spec.limited.nominalConcurrencyShares', ncs, 'must be a non-negative integer'));
  for (const k of ['lendablePercent', 'borrowingLimitPercent']) {
    const v = l[k];
    if (v !== undefined && v !== null && (!isInt(v) || v < 0 || (k === 'lendablePercent' && v > 100))) {
      out.push(
        cause.invalid(
          `spec.limited.${k}`,
          v,
          k === 'lendablePercent' ? 'must be between 0 and 100, inclusive' : 'if specified, must be a non-negative integer',
        ),
      );
    }
  }
  const lrType = str(l, 'limitResponse', 'type');
  if (!LIMIT_RESPONSES.includes(lrType)) {
    out.push(cause.notSupported('spec.limited.limitResponse.type', lrType, LIMIT_RESPONSES));
    return out;
  }
  const queuing = at(l, 'limitResponse', 'queuing');
  if (lrType === 'Reject') {
    if (queuing !== undefined && queuing !== null)
      out.push(cause.forbidden('spec.limited.limitResponse.queuing', 'must be nil if limited.limitResponse.type is not Queue'));
    return out;
  }
  if (!isPlainObject(queuing)) {
    out.push(cause.required('spec.limited.limitResponse.queuing', 'must not be empty if limited.limitResponse.type is Queue'));
    return out;
  }
  const f = 'spec.limited.limitResponse.queuing';
  const { queues, handSize, queueLengthLimit } = { queues: queuing['queues'], handSize: queuing['handSize'], queueLengthLimit: queuing['queueLengthLimit'] };
  if (!isInt(queueLengthLimit) || queueLengthLimit <= 0) out.push(cause.invalid(`${f}.queueLengthLimit`, queueLengthLimit, 'must be positive'));
  if (!isInt(queues) || queues <= 0) out.push(cause.invalid(`${f}.queues`, queues, 'must be positive'));
  else if (!isInt(handSize) || handSize <= 0) out.push(cause.invalid(`${f}.handSize`, handSize, 'must be positive'));
  else if (handSize > queues) out.push(cause.invalid(`${f}.handSize`, handSize, `should not be greater than queues (${queues})`));
  else if (entropyBits(queues, handSize) > 60)
    out.push(cause.invalid(`${f}.handSize`, handSize, `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than 60`));
  return out;
}

/** log2 of queues^handSize: the bits one hand draws, which kube's shuffle sharding bounds at 60. */
function entropyBits(queues: number, handSize: number): number {
  return Math.ceil(handSize * Math.log2(queues));
}
