// Rule coverage lives in lib/rbac (the core backend's escalation checks use
// it); this path is kept for the authorizer's files and their tests.
export * from '../../../lib/rbac/covers.js';
