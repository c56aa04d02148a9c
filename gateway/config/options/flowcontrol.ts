// How many requests run at once, and API Priority and Fairness.
import { bool, flagsOf, int, type OptionGroup } from './flag.js';

export interface FlowControlOptions {
  /** Concurrent non-mutating / mutating requests that are not long-running; 0 = no limit. */
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  /** API Priority and Fairness: the two limits above are one total shared by priority levels; off, they apply plainly. */
  readonly enablePriorityAndFairness: boolean;
}

const flag = flagsOf<FlowControlOptions>();

export const flowcontrol: OptionGroup<FlowControlOptions> = {
  title: 'Flow control',
  defaults: {
    maxRequestsInflight: 400,
    maxMutatingRequestsInflight: 200,
    enablePriorityAndFairness: true,
  },
  flags: [
    flag({
      name: 'max-requests-inflight',
      key: 'maxRequestsInflight',
      arg: 'int',
      help: 'Most non-mutating requests in flight at once (long-running ones excepted); more get 429; 0 = no limit',
      parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer'),
    }),
    flag({
      name: 'max-mutating-requests-inflight',
      key: 'maxMutatingRequestsInflight',
      arg: 'int',
      help: 'Most mutating requests in flight at once; more get 429; 0 = no limit',
      parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer'),
    }),
    flag({
      name: 'enable-priority-and-fairness',
      key: 'enablePriorityAndFairness',
      arg: 'bool',
      boolean: true,
      help: 'Classify requests by FlowSchema and queue them fairly per PriorityLevelConfiguration within the total of the two in-flight limits; false = the plain limits',
      parse: bool,
    }),
  ],
};
