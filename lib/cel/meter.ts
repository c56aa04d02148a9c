// The evaluation bound, counted in cel-go's runtime cost units (what
// kube-apiserver's per-call limit and per-object budget count). @bufbuild/cel
// has no cost tracking, so the cost is gathered from two hooks:
// - every function and operator call goes through the environment's function
//   resolver, which environment.ts wraps: each call is charged as cel-go's
//   CostTracker charges it, from the actual argument and result values
//   (callCost below: 1, or string and list sizes times cel-go's factors);
// - what is not a call (identifiers, selections, indexing, has(), list and
//   map literals, `@not_strictly_false`) cannot be observed, so its cost is
//   counted from the AST (ast.ts, meterProgram): once per evaluation for the
//   part outside loops, and per iteration for a loop's condition and step,
//   charged by COST_TICK, which wraps every loop condition.
// Evaluation is synchronous, so one module-level "current meter" is safe: it
// is set for exactly one evaluate() call.
import { celFunc, CelScalar, isCelList, isCelMap, type CelFunc, type CelValue } from '@bufbuild/cel';
import { formatRegexSize } from './format.js';

/** Not a valid CEL identifier, so no expression can call it itself. */
export const COST_TICK = '@gatehouse_cost_tick';

export interface CostLimits {
  /** Cost (cel-go's runtime units) allowed in one evaluation. */
  readonly maxCost: number;
  /** Wall-clock budget of one evaluation (a safety net: kube has none). */
  readonly timeoutMs: number;
}

/** kube's per-call limit (celconfig.PerCallLimit). */
export const DEFAULT_LIMITS: CostLimits = Object.freeze({ maxCost: 1_000_000, timeoutMs: 100 });

/** cel-go's wording when a cost limit stops an evaluation. */
export const COST_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

export class CostMeter {
  cost = 0;
  exceeded: string | undefined;
  private charges = 0;
  private readonly deadline: number;

  constructor(
    private readonly limits: CostLimits,
    private readonly clock: () => number,
  ) {
    this.deadline = clock() + limits.timeoutMs;
  }

  charge(n: number): void {
    if (this.exceeded) throw new Error(this.exceeded);
    this.cost += n;
    if (this.cost > this.limits.maxCost) this.exceeded = COST_EXCEEDED;
    else if ((++this.charges & 1023) === 0 && this.clock() > this.deadline) {
      this.exceeded = `timeout: evaluation took longer than ${this.limits.timeoutMs}ms`;
    }
    if (this.exceeded) throw new Error(this.exceeded);
  }
}

let current: CostMeter | undefined;

export function metered<T>(meter: CostMeter, fn: () => T): T {
  const previous = current;
  current = meter;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

/** Charges the running evaluation, if any (the resolver hook of environment.ts). */
export function charge(n: number): void {
  current?.charge(n);
}

// cel-go's factors (common/cost.go).
const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;

/** cel-go's actualSize: characters of a string, bytes, list items, map entries; 1 for anything else. */
function size(v: CelValue | undefined): number {
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (isCelList(v) || isCelMap(v)) return v.size;
  return 1;
}

const traverse = (v: CelValue | undefined, factor = STRING_TRAVERSAL) => Math.ceil(size(v) * factor);

const STRING_ORDER = new Set(['_<_', '_<=_', '_>_', '_>=_']);

/**
 * The cost of one call as cel-go's CostTracker.costCall and kube's library
 * CostEstimator.CallCost count it, from its first two arguments (the
 * receiver first, as there) and its result.
 */
export function callCost(name: string, a: CelValue | undefined, b: CelValue | undefined, result: CelValue): number {
  switch (name) {
    case '_==_':
    case '_!=_':
      return Math.ceil(Math.min(size(a), size(b)) * STRING_TRAVERSAL);
    case '_+_':
      return typeof a === 'string' || a instanceof Uint8Array ? Math.ceil((size(a) + size(b)) * STRING_TRAVERSAL) : 1;
    case 'startsWith':
    case 'endsWith':
      return traverse(a);
    case 'contains':
      return typeof a === 'string' ? traverse(a) * traverse(b) : 1;
    case 'matches':
    case 'find':
    case 'findAll':
      return Math.ceil((1 + size(a)) * STRING_TRAVERSAL) * traverse(b, REGEX_LENGTH);
    case '@in':
      return isCelList(b) ? size(b) : 1;
    // kube's library (k8s.io/apiserver/pkg/cel/library/cost.go), matched by name as there.
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return isCelList(a) ? size(a) : traverse(a);
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'url':
      return traverse(a);
    case 'ip':
      return typeof a === 'string' ? traverse(a) : 1;
    case 'replace':
    case 'split':
      return traverse(a, 2 * STRING_TRAVERSAL);
    case 'join':
      return traverse(result, 2 * STRING_TRAVERSAL);
    case 'validate': {
      // kube charges a format check as a `matches` of the string against a regex of the format's size.
      const regex = formatRegexSize(a);
      return regex === undefined ? 1 : Math.ceil((1 + size(b)) * STRING_TRAVERSAL) * Math.ceil(regex * REGEX_LENGTH);
    }
    case 'check':
      // kube: an authorization check costs as much as two may fit in one call's limit.
      return 350_000;
    case 'containsIP':
      return 1 + (typeof b === 'string' ? traverse(b) : 0);
    case 'containsCIDR':
      return 3 + (typeof b === 'string' ? traverse(b) : 0);
    default:
      if (STRING_ORDER.has(name) && (typeof a === 'string' || a instanceof Uint8Array)) return Math.ceil(Math.min(size(a), size(b)) * STRING_TRAVERSAL);
      // Everything else, kube's nominal library calls included, costs 1.
      return 1;
  }
}

export const costFunctions: readonly CelFunc[] = [
  // A loop's condition, wrapped; `weight` is the AST-counted cost of one iteration's condition and step.
  celFunc(COST_TICK, [CelScalar.BOOL, CelScalar.INT], CelScalar.BOOL, (cond: boolean, weight: bigint) => {
    current?.charge(Number(weight));
    return cond;
  }),
];
