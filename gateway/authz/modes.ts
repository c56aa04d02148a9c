// Authorization mode → the factory of its authorizer: the one place that
// knows what each mode needs, for the --authorization-mode list and the
// --authorization-config file alike (both arrive as AuthorizerSpecs).
import { hasOwn } from '../../lib/api/own.js';
import { ConfigError } from '../../lib/config/error.js';
import { FieldPath, fieldError } from '../config/fielderrors.js';
import { AUTHORIZATION_MODES } from '../config/options/authorization.js';
import { loadAbac } from './abac.js';
import { alwaysAllow, alwaysDeny } from './always.js';
import { AUTHORIZER_TYPES, type AuthorizerSpec, type AuthorizerType } from './config.js';
import { MatchConditions } from './matchconditions.js';
import type { SharedAuthorizers } from './shared.js';
import type { Authorizer } from './types.js';
import { WebhookAuthorizer, webhookClient } from './webhook.js';

export interface ModeContext {
  /** The spec's index in the file's `authorizers`, which messages name; undefined for the --authorization-mode list. */
  readonly index: number | undefined;
  /** --authorization-policy-file, for ABAC. */
  readonly policyFile: string | undefined;
  /** AuthorizeWithSelectors: the webhook sends the request's selectors. */
  readonly withSelectors: boolean;
  readonly shared: SharedAuthorizers;
  readonly log: (msg: string) => void;
  readonly clock: (() => number) | undefined;
  /** Each factory that opens something (a webhook's client) leaves here how to close it, run when its chain retires. */
  readonly closers: Array<() => void>;
}

export type AuthorizerFactory = (spec: AuthorizerSpec, c: ModeContext) => Authorizer | Promise<Authorizer>;

const at = (c: ModeContext): string => (c.index === undefined ? '--authorization-mode' : `authorizers[${c.index}]`);
const clockOf = (c: ModeContext) => (c.clock ? { clock: c.clock } : {});

export const AUTHORIZER_FACTORIES: Readonly<Record<AuthorizerType, AuthorizerFactory>> = Object.freeze({
  AlwaysAllow: () => alwaysAllow,
  AlwaysDeny: () => alwaysDeny,
  ABAC: (_spec, c) => {
    if (c.policyFile === undefined) throw new Error(`${at(c)}.type: Invalid value: "ABAC": requires --authorization-policy-file`);
    return loadAbac(c.policyFile);
  },
  RBAC: (_spec, c) => {
    const rbac = c.shared.rbac();
    if (!rbac) throw new Error(`${at(c)}.type: Invalid value: "RBAC": the RBAC authorizer is not available`);
    return rbac;
  },
  Node: (_spec, c) => c.shared.node(),
  Webhook: async (spec, c) => {
    const w = spec.webhook!;
    const what = c.index === undefined ? '--authorization-webhook-config-file' : `${at(c)}.webhook.connectionInfo.kubeConfigFile`;
    const client = await webhookClient(w.kubeConfigFile, what, { timeoutMs: w.timeoutMs, log: c.log, ...clockOf(c) });
    const authorizer = new WebhookAuthorizer(client, {
      name: spec.name,
      version: w.subjectAccessReviewVersion,
      authorizedTtlMs: w.authorizedTtlMs,
      unauthorizedTtlMs: w.unauthorizedTtlMs,
      failurePolicy: w.failurePolicy,
      matchConditions: new MatchConditions(w.matchConditions),
      withSelectors: c.withSelectors,
      log: c.log,
      ...clockOf(c),
    });
    c.closers.push(() => authorizer.close());
    return authorizer;
  },
});

/**
 * The factory of `type`; an unknown mode is refused in the words its source
 * uses for it (the flag parser's, or the configuration file's field error).
 */
export function factoryFor(type: string, index: number | undefined): AuthorizerFactory {
  if (hasOwn(AUTHORIZER_FACTORIES, type)) return AUTHORIZER_FACTORIES[type as AuthorizerType];
  if (index === undefined) throw new ConfigError(`unknown mode (one of ${AUTHORIZATION_MODES.join(', ')})`, { flag: '--authorization-mode', value: type });
  throw new Error(fieldError.unsupported(FieldPath.root('authorizers').index(index).child('type'), type, AUTHORIZER_TYPES));
}
