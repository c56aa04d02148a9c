// The documents against the client that must accept them: a real kubectl,
// talking to a minimal loopback server that serves only discovery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { builtinRegistry } from '../../lib/registry/index.js';
import { DEFAULT_RUNTIME_CONFIG, servedRegistry } from '../../gateway/config/runtimeconfig.js';
import { buildDiscovery, negotiateAggregated, type Document } from '../../lib/discovery/index.js';

const run = promisify(execFile);

function findKubectl(version: string): string | undefined {
  try {
    const real = realpathSync(execFileSync('which', ['kubectl'], { encoding: 'utf8' }).trim());
    const candidate = join(dirname(real), `kubectl.${version}`);
    return existsSync(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

async function serve(paths: string[]): Promise<{ server: Server; url: string }> {
  // What a server with the default --runtime-config serves (alpha versions off).
  const discovery = buildDiscovery(servedRegistry(DEFAULT_RUNTIME_CONFIG), {
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }],
  });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    paths.push(path);
    const aggregated = negotiateAggregated(req.headers.accept);
    let doc: Document | undefined;
    if (path === '/api') doc = aggregated ? discovery.aggregated('api', aggregated) : discovery.api;
    else if (path === '/apis') doc = aggregated ? discovery.aggregated('apis', aggregated) : discovery.apis;
    else if (path === '/version') doc = discovery.version;
    else {
      const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)(?:\/([^/]+))?)$/.exec(path);
      if (m?.[1]) doc = discovery.resources('', m[1]);
      else if (m?.[2] && m[3]) doc = discovery.resources(m[2], m[3]);
      else if (m?.[2]) doc = discovery.group(m[2]);
    }
    if (!doc) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
      return;
    }
    res.writeHead(200, { 'content-type': doc.contentType, etag: doc.etag }).end(doc.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  assert.ok(addr && typeof addr === 'object');
  return { server, url: `http://127.0.0.1:${addr.port}` };
}

for (const version of ['1.32', '1.27']) {
  const kubectl = findKubectl(version);
  test(`kubectl ${version} lists every built-in resource from discovery`, { skip: kubectl ? false : `kubectl.${version} not installed` }, async () => {
    const paths: string[] = [];
    const { server, url } = await serve(paths);
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-kubectl-'));
    try {
      writeFileSync(join(dir, 'config'), 'apiVersion: v1\nkind: Config\n');
      const { stdout } = await run(
        kubectl!,
        ['--kubeconfig', join(dir, 'config'), '--cache-dir', join(dir, 'cache'), '--server', url, 'api-resources', '-o', 'wide', '--no-headers'],
        { timeout: 30_000 },
      );
      const rows = stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/));
      const names = rows.map((r) => `${r[0]}.${r.find((c) => c === 'v1' || /\/v\d+$/.test(c))}`).sort();
      // The virtual review types (served by the gateway, create-only) are listed too.
      const reviews = builtinRegistry()
        .all()
        .filter((t) => t.servedBy === 'gateway' && t.version === 'v1')
        .map((t) => `${t.plural}.${t.group}/v1`);
      assert.deepEqual(
        names,
        [
          ...reviews,
          'apiservices.apiregistration.k8s.io/v1',
          'certificatesigningrequests.certificates.k8s.io/v1',
          'clusterrolebindings.rbac.authorization.k8s.io/v1',
          'clusterroles.rbac.authorization.k8s.io/v1',
          'configmaps.v1',
          'componentstatuses.v1',
          'limitranges.v1',
          'resourcequotas.v1',
          'horizontalpodautoscalers.autoscaling/v2',
          'csidrivers.storage.k8s.io/v1',
          'csinodes.storage.k8s.io/v1',
          'csistoragecapacities.storage.k8s.io/v1',
          'volumeattachments.storage.k8s.io/v1',
          'controllerrevisions.apps/v1',
          'cronjobs.batch/v1',
          'jobs.batch/v1',
          'poddisruptionbudgets.policy/v1',
          'ingresses.networking.k8s.io/v1',
          'ingressclasses.networking.k8s.io/v1',
          'networkpolicies.networking.k8s.io/v1',
          'priorityclasses.scheduling.k8s.io/v1',
          'storageclasses.storage.k8s.io/v1',
          'runtimeclasses.node.k8s.io/v1',
          'daemonsets.apps/v1',
          'deployments.apps/v1',
          'replicasets.apps/v1',
          'statefulsets.apps/v1',
          'customresourcedefinitions.apiextensions.k8s.io/v1',
          'endpoints.v1',
          'endpointslices.discovery.k8s.io/v1',
          'events.events.k8s.io/v1',
          'events.v1',
          'flowschemas.flowcontrol.apiserver.k8s.io/v1',
          'leases.coordination.k8s.io/v1',
          'mutatingwebhookconfigurations.admissionregistration.k8s.io/v1',
          'validatingwebhookconfigurations.admissionregistration.k8s.io/v1',
          'namespaces.v1',
          'nodes.v1',
          'persistentvolumeclaims.v1',
          'persistentvolumes.v1',
          'pods.v1',
          'podtemplates.v1',
          'replicationcontrollers.v1',
          'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io/v1',
          'rolebindings.rbac.authorization.k8s.io/v1',
          'roles.rbac.authorization.k8s.io/v1',
          'secrets.v1',
          'serviceaccounts.v1',
          'services.v1',
          'validatingadmissionpolicies.admissionregistration.k8s.io/v1',
          'validatingadmissionpolicybindings.admissionregistration.k8s.io/v1',
        ].sort(),
      );
      assert.match(stdout, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment\s+create,delete,deletecollection,get,list,patch,update,watch\s+all$/m);
      assert.match(stdout, /^pods\s+po\s+v1\s+true\s+Pod\s+create,delete,deletecollection,get,list,patch,update,watch\s+all$/m);
      if (version === '1.32') {
        // Aggregated discovery answered everything: no per-group-version requests.
        assert.deepEqual([...new Set(paths)].sort(), ['/api', '/apis']);
      }
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
