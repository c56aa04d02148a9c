// What every handler of the core backend works with, built once at start.
import type { Registry } from '../../lib/registry/index.js';
import type { LiveRegistry } from '../../lib/registry/live.js';
import type { Store } from './store/types.js';
import type { TokenIssuing } from './handlers/tokenrequest.js';
import type { ConversionWebhooks } from '../../lib/crd/conversionwebhook.js';
import type { Trace } from '../../lib/tracing/span.js';
import type { Admission } from './admission/types.js';
import type { WebhookConfigurations } from './admission/webhooks/cache.js';
import type { PolicyCache } from './admission/policies/cache.js';
import type { NamespacePolicies } from './quota/cache.js';

export interface CoreEnv {
  readonly store: Store;
  /** The registry in force (a getter over `live`): read it per use, never keep it. */
  readonly registry: Registry;
  /** Swapped by the CRD registry sync when CustomResourceDefinitions change. */
  readonly live: LiveRegistry;
  readonly clock: () => number;
  readonly log: (msg: string) => void;
  /** How long a read waits for a resourceVersion the store has not reached before 504. */
  readonly tooLargeWaitMs: number;
  /** Interval of BOOKMARK events on watches that asked for them. */
  readonly bookmarkIntervalMs: number;
  /** A watch without timeoutSeconds ends at a random point between this many seconds and twice that (--min-request-timeout). */
  readonly minRequestTimeoutS: number;
  readonly bodyLimit: number;
  /** Service-account token issuing (the serviceaccounts/token subresource); absent = not served. */
  readonly tokens?: TokenIssuing;
  /** The AllowUnsafeMalformedObjectDeletion gate: DELETE may remove corrupt objects with ignoreStoreReadErrorWithClusterBreakingPotential. */
  readonly allowUnsafeMalformedObjectDeletion?: boolean;
  /** The CBORServingAndStorage gate: application/cbor answers and bodies, cbor-seq watches, apply-patch+cbor. */
  readonly cbor?: boolean;
  /** Told how many objects a cluster-wide list without selectors saw (priority and fairness sizes LISTs by it). */
  readonly onListed?: (group: string, resource: string, total: number) => void;
  /** Calls CRD conversion webhooks (backends/core/conversion.ts); absent = webhook conversions fail (500). */
  readonly conversion?: ConversionWebhooks;
  /** The admission plugins in force (a getter: the front door supplies its plugins once its authorizers exist); absent = the built-in ones. */
  readonly admission?: Admission;
  /** The admission webhook configurations in force (a watch-fed cache); absent = no webhooks are called. */
  readonly admissionWebhooks?: WebhookConfigurations;
  /** The ValidatingAdmissionPolicies, bindings and params in force (a watch-fed cache); absent = no policies apply. */
  readonly admissionPolicies?: PolicyCache;
  /** The LimitRanges and ResourceQuotas of each namespace (a watch-fed cache) for LimitRanger and ResourceQuota; absent = neither applies. */
  readonly namespacePolicies?: NamespacePolicies;
  /** Open watches, closed at shutdown. */
  readonly watches: Set<() => void>;
  /** A recorded request's view of the env (tracedenv.ts): its trace, for calls that leave the process. */
  readonly trace?: Trace;
}
