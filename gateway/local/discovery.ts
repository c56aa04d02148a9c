// Discovery documents of the registry the gateway serves, by request path;
// built once per registry in force (CustomResourceDefinitions swap it).
import { buildDiscovery } from '../../lib/discovery/index.js';
import { derived, type RegistrySource } from '../../lib/registry/live.js';
import type { DiscoverySource, Document } from './router.js';

export function registryDiscovery(registry: RegistrySource, serverAddress: string): DiscoverySource {
  const current = derived(registry, (r) => buildDiscovery(r, { serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] }));
  return {
    get version() {
      return current().version;
    },
    document(path: string, aggregated?: 'v2' | 'v2beta1'): Document | undefined {
      const d = current();
      const parts = path.split('/').filter(Boolean);
      const root = parts[0];
      if (root !== 'api' && root !== 'apis') return undefined;
      if (parts.length === 1) {
        if (aggregated) return d.aggregated(root, aggregated);
        return root === 'api' ? d.api : d.apis;
      }
      if (root === 'api') return parts.length === 2 ? d.resources('', parts[1]!) : undefined;
      if (parts.length === 2) return d.group(parts[1]!);
      return parts.length === 3 ? d.resources(parts[1]!, parts[2]!) : undefined;
    },
  };
}
