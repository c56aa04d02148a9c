// RBAC's data types live in lib/rbac (the core backend's escalation checks
// read them too); this path is kept for the authorizer's files and their tests.
export * from '../../../lib/rbac/types.js';
