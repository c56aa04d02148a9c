// Every built-in type, one list per API group.
import type { ResourceType } from '../types.js';
import { CORE_TYPES } from './core.js';
import { EVENTS_TYPES } from './events.js';
import { COORDINATION_TYPES } from './coordination.js';
import { DISCOVERY_TYPES } from './discovery.js';
import { RBAC_TYPES } from './rbac.js';
import { APIREGISTRATION_TYPES } from './apiregistration.js';

export const BUILTIN_TYPES: readonly ResourceType[] = [
  ...CORE_TYPES, ...EVENTS_TYPES, ...COORDINATION_TYPES, ...DISCOVERY_TYPES, ...RBAC_TYPES, ...APIREGISTRATION_TYPES,
];
