// The core backend's admission chain, built once where the backend starts:
// the built-in plugins always, the optional ones as --enable-admission-plugins
// names them. What the plugins need from the front door comes in as
// interfaces: its authorizer chain and RBAC's rule resolution.
import type { RequestAuthorizer } from '../../../lib/api/authorization.js';
import type { RbacRuleResolver } from '../../../lib/rbac/rules.js';
import { applyCreateAuthorization } from './applycreate.js';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from './certificates.js';
import { limitRangerDefaults, limitRangerValidation } from './limitranger.js';
import { namespaceLifecycle } from './namespacelifecycle.js';
import { nodeRestriction } from './noderestriction.js';
import { rbacEscalation } from './rbacescalation.js';
import { resourceQuotaAdmission } from './resourcequota.js';
import { serviceAccountAdmission } from './serviceaccount.js';
import { validatingAdmissionPolicy } from './policies/plugin.js';
import type { Admission } from './types.js';
import { mutatingWebhooks } from './webhooks/mutating.js';
import { validatingWebhooks } from './webhooks/validating.js';

export interface AdmissionInputs {
  /** The optional plugins in force (--enable-admission-plugins, the default ones not disabled): LimitRanger, NodeRestriction, ResourceQuota, ServiceAccount. */
  readonly enabled: readonly string[];
  /** The front door's authorizers (in-process its chain, in the backend's own process its SubjectAccessReview). */
  readonly authorizer: RequestAuthorizer;
  /** RBAC's rule resolution over the RBAC objects (the escalation checks). */
  readonly rbac: RbacRuleResolver;
  /** Groups that may always escalate (system:masters). */
  readonly privilegedGroups: readonly string[];
}

/** What every backend admits with before (or without) a front door's plugins: NamespaceLifecycle, CertificateSubjectRestriction. */
export const BUILTIN_ADMISSION: Admission = Object.freeze({ mutating: [], validating: [namespaceLifecycle, certificateSubjectRestriction] });

export function buildAdmission(i: AdmissionInputs): Admission {
  return {
    authorizer: i.authorizer,
    // kube's order: the built-in mutating plugins, then MutatingAdmissionWebhook.
    mutating: [
      ...(i.enabled.includes('LimitRanger') ? [limitRangerDefaults] : []),
      ...(i.enabled.includes('ServiceAccount') ? [serviceAccountAdmission] : []),
      mutatingWebhooks(i.authorizer),
    ],
    validating: [
      applyCreateAuthorization(i.authorizer),
      namespaceLifecycle,
      ...(i.enabled.includes('LimitRanger') ? [limitRangerValidation] : []),
      ...(i.enabled.includes('NodeRestriction') ? [nodeRestriction] : []),
      rbacEscalation({ authorizer: i.authorizer, rules: i.rbac, privilegedGroups: i.privilegedGroups }),
      certificateApproval(i.authorizer),
      certificateSigning(i.authorizer),
      certificateSubjectRestriction,
      // kube's order: ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook.
      validatingAdmissionPolicy(i.authorizer),
      validatingWebhooks(i.authorizer),
      // kube's order: ResourceQuota last, so a write refused by anything else is never charged.
      ...(i.enabled.includes('ResourceQuota') ? [resourceQuotaAdmission()] : []),
    ],
  };
}
