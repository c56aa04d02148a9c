// The evaluation bound. @bufbuild/cel has no cost tracking, so the compiler
// wraps the loop condition of every comprehension (all, exists, map, filter,
// …) in a call to COST_TICK; each iteration of any loop, however nested,
// passes through it. Evaluation is synchronous, so one module-level "current
// meter" is safe: it is set for exactly one evaluate() call.
import { celFunc, CelScalar, type CelFunc } from '@bufbuild/cel';

/** Not a valid CEL identifier, so no expression can call it itself. */
export const COST_TICK = '@gatehouse_cost_tick';

export interface CostLimits {
  /** Loop iterations allowed in one evaluation. */
  readonly maxIterations: number;
  /** Wall-clock budget of one evaluation. */
  readonly timeoutMs: number;
}

export const DEFAULT_LIMITS: CostLimits = Object.freeze({ maxIterations: 1_000_000, timeoutMs: 100 });

export class CostMeter {
  iterations = 0;
  exceeded: string | undefined;
  private readonly deadline: number;

  constructor(private readonly limits: CostLimits, private readonly clock: () => number) {
    this.deadline = clock() + limits.timeoutMs;
  }

  tick(): void {
    if (this.exceeded) throw new Error(this.exceeded);
    this.iterations++;
    if (this.iterations > this.limits.maxIterations) {
      this.exceeded = `cost limit exceeded: more than ${this.limits.maxIterations} loop iterations`;
    } else if ((this.iterations & 127) === 0 && this.clock() > this.deadline) {
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

export const costFunctions: readonly CelFunc[] = [
  celFunc(COST_TICK, [CelScalar.BOOL], CelScalar.BOOL, (cond: boolean) => {
    current?.tick();
    return cond;
  }),
];
