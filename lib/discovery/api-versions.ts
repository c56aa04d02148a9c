// GET /api: the versions of the core group (metav1.APIVersions). kube serves
// this document without apiVersion, and clients expect exactly that shape.
import type { Registry } from '../registry/index.js';

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}

export function apiVersions(registry: Registry, cidrs: readonly ServerAddressByClientCIDR[]): APIVersions {
  return {
    kind: 'APIVersions',
    versions: [...registry.coreVersions()],
    serverAddressByClientCIDRs: cidrs.map((c) => ({ clientCIDR: c.clientCIDR, serverAddress: c.serverAddress })),
  };
}
