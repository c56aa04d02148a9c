// Discovery documents of the registry the gateway serves, by request path.
import { buildDiscovery } from '../../lib/discovery/index.js';
import type { Registry } from '../../lib/registry/index.js';
import type { DiscoverySource, Document } from './router.js';

export function registryDiscovery(registry: Registry, serverAddress: string): DiscoverySource {
  const d = buildDiscovery(registry, { serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] });
  return {
    version: d.version,
    document(path: string, aggregated?: 'v2' | 'v2beta1'): Document | undefined {
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
