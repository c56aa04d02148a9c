// Every built-in type, one list per API group.
import type { ResourceType } from '../types.js';
import { CORE_TYPES } from './core.js';
import { CORE_WORKLOAD_TYPES } from './core-workloads.js';
import { CORE_POLICY_TYPES } from './core-policy.js';
import { componentstatuses } from './core-componentstatus.js';
import { EVENTS_TYPES } from './events.js';
import { APPS_TYPES } from './apps.js';
import { BATCH_TYPES } from './batch.js';
import { AUTOSCALING_TYPES } from './autoscaling.js';
import { POLICY_TYPES } from './policy.js';
import { NETWORKING_TYPES } from './networking.js';
import { SCHEDULING_TYPES } from './scheduling.js';
import { NODE_TYPES, STORAGE_TYPES } from './storage.js';
import { STORAGE_CSI_TYPES } from './storage-csi.js';
import { COORDINATION_TYPES } from './coordination.js';
import { DISCOVERY_TYPES } from './discovery.js';
import { RBAC_TYPES } from './rbac.js';
import { APIREGISTRATION_TYPES } from './apiregistration.js';
import { AUTHENTICATION_TYPES } from './authentication.js';
import { AUTHORIZATION_TYPES } from './authorization.js';
import { FLOWCONTROL_TYPES } from './flowcontrol.js';
import { APIEXTENSIONS_TYPES } from './apiextensions.js';
import { ACCESS_TYPES } from './access.js';
import { CERTIFICATES_TYPES } from './certificates.js';
import { ADMISSIONREGISTRATION_TYPES } from './admissionregistration.js';
import { ADMISSION_POLICY_TYPES } from './admissionregistration-policies.js';
import { builtinSchemaOf } from '../../schema/index.js';

/** Each type with its generated schema attached (lib/schema). */
function withSchema(t: ResourceType): ResourceType {
  const schema = builtinSchemaOf(t.group, t.version, t.kind);
  return schema ? { ...t, schema } : t;
}

export const BUILTIN_TYPES: readonly ResourceType[] = [
  ...CORE_TYPES,
  ...CORE_WORKLOAD_TYPES,
  ...CORE_POLICY_TYPES,
  componentstatuses,
  ...EVENTS_TYPES,
  ...APPS_TYPES,
  ...AUTOSCALING_TYPES,
  ...BATCH_TYPES,
  ...POLICY_TYPES,
  ...NETWORKING_TYPES,
  ...SCHEDULING_TYPES,
  ...STORAGE_TYPES,
  ...STORAGE_CSI_TYPES,
  ...NODE_TYPES,
  ...COORDINATION_TYPES,
  ...DISCOVERY_TYPES,
  ...RBAC_TYPES,
  ...APIREGISTRATION_TYPES,
  ...AUTHENTICATION_TYPES,
  ...AUTHORIZATION_TYPES,
  ...FLOWCONTROL_TYPES,
  ...APIEXTENSIONS_TYPES,
  ...ADMISSIONREGISTRATION_TYPES,
  ...ADMISSION_POLICY_TYPES,
  ...ACCESS_TYPES,
  ...CERTIFICATES_TYPES,
].map(withSchema);
