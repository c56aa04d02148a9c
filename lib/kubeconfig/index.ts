// Outbound client configuration: one kubeconfig loader and one client for
// every call Gatehouse makes (token webhooks now, upstream backends later).
import { loadKubeconfig, type ClientConfig } from './load.js';
import { KubeClient, type ClientOptions } from './client.js';

export { loadKubeconfig, parseKubeconfig, EXEC_API_VERSIONS, INTERACTIVE_MODES, EXEC_CLUSTER_EXTENSION } from './load.js';
export type { ClientConfig, ClusterConfig, UserConfig, ExecConfig, ExecApiVersion, InteractiveMode } from './load.js';
export { ExecCredentialProvider, ExecPluginError, parseExecCredential, type ExecCredential } from './exec.js';
export { KubeClient, ClientRequestError, type ClientOptions, type ClientReply } from './client.js';

/** Loads a kubeconfig file and builds its client (agents made once, here). */
export async function clientFromKubeconfig(file: string, opts: ClientOptions & { context?: string } = {}): Promise<KubeClient> {
  const config: ClientConfig = await loadKubeconfig(file, opts.context !== undefined ? { context: opts.context } : {});
  return new KubeClient(config, opts);
}
