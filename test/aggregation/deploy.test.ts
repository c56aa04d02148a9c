// The deployment files, checked as far as this machine allows: every YAML
// document parses; every gatehouse command line names a real subcommand and
// flags `gatehouse serve`'s parser accepts; referenced project files exist;
// ports agree (containerPort = --secure-port = the Service's targetPort); and
// the manifests of types Gatehouse serves pass `kubectl apply --dry-run=server`
// against a running Gatehouse.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { Kubectl, ROOT, findKubectl, startGatehouse, stopAll, tempDir } from '../e2e/helpers.js';

const SUBCOMMANDS = new Set(['serve', 'core-backend', 'sample-backend', 'certs']);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

function k8sDocs(): Array<{ file: string; doc: Doc }> {
  return readdirSync(join(ROOT, 'k8s'))
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(ROOT, 'k8s', file), 'utf8')).map((d) => {
        assert.equal(d.errors.length, 0, `${file}: ${d.errors.map((e) => e.message).join('; ')}`);
        return { file, doc: d.toJS() };
      }),
    );
}

/** Checks one gatehouse argv (after `node bin/gatehouse.js` or the image entrypoint); returns --secure-port. */
function checkGatehouseArgs(where: string, argv: readonly string[]): number | undefined {
  const [sub, ...flags] = argv;
  assert.ok(SUBCOMMANDS.has(sub!), `${where}: unknown subcommand ${sub}`);
  if (sub === 'certs') return undefined;
  const parsed = parseServeFlags([...flags]);
  assert.ok(!('error' in parsed), `${where}: ${'error' in parsed ? parsed.error : ''}`);
  return 'options' in parsed ? parsed.options.securePort : undefined;
}

describe('deployment files', { timeout: 120_000 }, () => {
  after(() => stopAll());

  it('docker-compose.yml parses and every gatehouse command, file and port in it exists', () => {
    const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
    const services = compose.services as Record<string, Doc>;
    for (const name of ['certs', 'redis', 'gatehouse', 'core-backend', 'sample-backend']) assert.ok(services[name], name);
    // The gateway routes the built-in groups to the core-backend service (--core-backend-url).
    const gw: string[] = services['gatehouse'].command;
    assert.ok(gw.includes('--core-backend-url=https://core-backend:8443'), 'gatehouse routes built-ins to core-backend');
    assert.ok(services['gatehouse'].depends_on['core-backend'], 'gatehouse starts after core-backend');
    assert.ok(!services['core-backend'].depends_on['gatehouse'], 'no start-up cycle: the core backend does not wait for the gateway');
    const saFlags = (cmd: string[]) => cmd.filter((a) => a.startsWith('--service-account-')).sort();
    assert.deepEqual(saFlags(gw), saFlags(services['core-backend'].command), 'gateway and core backend share the service-account keys and issuer');
    assert.ok(saFlags(gw).length >= 3);
    let gatehouseServices = 0;
    for (const [name, svc] of Object.entries(services)) {
      const cmd: string[] | undefined = svc.command;
      // The Gatehouse services run the image the Dockerfile builds (entrypoint `node bin/gatehouse.js`): built, not mounted.
      if (!cmd || svc.image !== 'gatehouse:0.1.0') continue;
      gatehouseServices++;
      assert.equal(svc.build, '.', `${name} builds the image from the Dockerfile`);
      const volumes: string[] = svc.volumes ?? [];
      assert.ok(!volumes.some((v) => v.startsWith('.:')), `${name} does not mount the source tree`);
      const port = checkGatehouseArgs(`docker-compose ${name}`, cmd);
      for (const p of (svc.ports ?? []) as string[]) assert.equal(Number(p.split(':')[1]), port, `${name} publishes its --secure-port`);
      for (const arg of cmd) {
        // A file under /app is a project file bound into the container read-only.
        const m = /=(\/app\/.+)$/.exec(arg);
        if (!m) continue;
        const bind = volumes.find((v) => v.split(':')[1] === m[1]);
        assert.ok(bind, `${name}: ${m[1]} is bound from the project`);
        assert.ok(existsSync(join(ROOT, bind.split(':')[0]!)), `${name}: ${bind.split(':')[0]} exists`);
      }
      for (const dep of Object.keys(svc.depends_on ?? {})) assert.ok(services[dep], `${name} depends on ${dep}`);
    }
    assert.equal(gatehouseServices, 4, 'certs, gatehouse, core-backend and sample-backend run the built image');
  });

  it('the Dockerfile builds dist/ in a first stage and ships it with production dependencies only, as a non-root user on Node 24', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const stages = text.split(/^FROM /m).slice(1);
    assert.equal(stages.length, 2, 'two stages');
    assert.match(stages[0]!, /^node:24[-\w.]* AS build/);
    assert.match(stages[0]!, /npm ci/);
    assert.match(stages[0]!, /npm run build/);
    const runtime = stages[1]!;
    assert.match(runtime, /^node:24[-\w.]* AS runtime/);
    assert.match(runtime, /npm ci --omit=dev/);
    assert.match(runtime, /COPY --from=build \/src\/dist \.\/dist/);
    assert.match(runtime, /^USER node$/m);
    assert.match(runtime, /ENTRYPOINT \["node", "bin\/gatehouse\.js"\]/);
    assert.doesNotMatch(runtime, /COPY (lib|gateway|backends) /, 'no sources in the runtime stage');
    // What the runtime stage leaves out must not be needed at run time.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const dev of ['typescript', 'tsx']) assert.equal(pkg.dependencies[dev], undefined, `${dev} is a devDependency`);
  });

  it('the k8s manifests parse, name real flags and agree on ports', () => {
    const docs = k8sDocs();
    assert.ok(existsSync(join(ROOT, 'Dockerfile')), 'the image the manifests name is built by the Dockerfile');
    for (const { file, doc } of docs.filter((d) => d.doc.kind === 'Deployment')) {
      const ports = new Set<number>();
      const containers = doc.spec.template.spec.containers as Doc[];
      // Sidecar pods: the app container is not Gatehouse; Gatehouse's --upstream must be that container's port on loopback.
      const apps = containers.filter((c) => c.image !== 'gatehouse:0.1.0');
      for (const c of containers.filter((x) => x.image === 'gatehouse:0.1.0')) {
        const port = checkGatehouseArgs(`${file} ${c.name}`, c.args);
        assert.deepEqual(
          c.ports.map((p: { containerPort: number }) => p.containerPort),
          [port],
        );
        ports.add(port!);
        const parsed = parseServeFlags([...c.args.slice(1)]);
        const upstream = 'options' in parsed ? parsed.options.upstream : undefined;
        if (upstream) {
          const u = new URL(upstream);
          assert.equal(u.hostname, '127.0.0.1', `${file}: the sidecar's upstream is on loopback`);
          assert.ok(
            apps.some((a) => (a.ports ?? []).some((p: { containerPort: number }) => p.containerPort === Number(u.port))),
            `${file}: an app container listens on ${u.port}`,
          );
        }
      }
      assert.equal(apps.length, containers.length - ports.size, `${file}: only sidecar pods hold other images`);
      if (apps.length > 0)
        assert.ok(
          containers.some((c) => c.image === 'gatehouse:0.1.0' && c.args.some((a: string) => a.startsWith('--upstream='))),
          `${file}: non-Gatehouse containers sit behind --upstream`,
        );
      const services = docs.filter(
        (d) =>
          d.doc.kind === 'Service' &&
          d.doc.metadata.namespace === doc.metadata.namespace &&
          JSON.stringify(d.doc.spec.selector) === JSON.stringify(doc.spec.selector.matchLabels),
      );
      assert.equal(services.length, 1, `${file}: one Service selects ${doc.metadata.name}`);
      for (const p of services[0]!.doc.spec.ports) assert.ok(ports.has(p.targetPort), `${file}: targetPort ${p.targetPort}`);
    }
    const apiservices = docs.filter((d) => d.doc.kind === 'APIService');
    assert.ok(apiservices.length >= 2);
    for (const { doc } of apiservices) assert.equal(doc.metadata.name, `${doc.spec.version}.${doc.spec.group}`);
  });

  it(
    'the manifests of served types pass kubectl apply --dry-run=server against Gatehouse',
    { skip: findKubectl() ? false : 'kubectl not installed' },
    async () => {
      const gh = await startGatehouse();
      const k = new Kubectl(findKubectl()!, gh.kubeconfig);
      const served = k8sDocs().filter((d) => d.doc.apiVersion !== 'apps/v1');
      // Namespaces for real first: a dry-run create does not make them, as in kube-apiserver.
      for (const ns of new Set(served.filter((d) => d.doc.kind === 'Namespace').map((d) => d.doc.metadata.name as string)))
        await k.ok(['create', 'namespace', ns]);
      const file = join(tempDir('manifests'), 'served.json');
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: served.map((d) => d.doc) }));
      const r = await k.run(['apply', '--dry-run=server', '-f', file]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /apiservice\.apiregistration\.k8s\.io\/v1\.samples\.gatehouse\.dev created \(server dry run\)/);
      assert.match(r.stdout, /clusterrolebinding\.rbac\.authorization\.k8s\.io\/gatehouse:kube-apiserver-reviews created \(server dry run\)/);
      assert.match(r.stdout, /clusterrolebinding\.rbac\.authorization\.k8s\.io\/demo:echo-auth-delegator created \(server dry run\)/);
    },
  );
});
