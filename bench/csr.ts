// CertificateSigningRequest figures: creates per second beside ConfigMap
// creates in the same run (the request's signature is checked on every
// create), and the time from an approval's acknowledgement to the watch event
// that carries the issued certificate, for 100 requests approved one after
// another. Self-contained: an in-process Gatehouse on the memory store with
// its csrsigning controller and the dev PKI CA (ratios, not absolute rates).
// Each create also counts this process's CPU time per request (client and
// server share it; steadier than rates on a shared machine), and the run ends
// with the signature check's floor (bench/csr-floor.ts).
import { generateKeyPairSync, sign } from 'node:crypto';
import { request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { oid, seq, tlv, bitString, TAG } from '../lib/certificates/der.js';
import { CONNECTIONS, DURATION, meanRate, measuredRate, rateLoop, withInProcessServer, type Call, type Rate, type ServerContext } from './inprocess.js';
import { Samples } from './stats.js';
import { csrFloor, printFloor } from './csr-floor.js';
import { recordRow } from './summary.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const USAGES = ['digital signature', 'key encipherment', 'client auth'];

/** A PKCS#10 request for CN=<cn> with a P-256 key of its own, as PEM. */
function csrPem(cn: string): string {
  const { privateKey: key, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const subject = seq(tlv(TAG.SET, seq(oid('2.5.4.3'), tlv(TAG.UTF8_STRING, Buffer.from(cn)))));
  const info = seq(tlv(TAG.INTEGER, Buffer.from([0])), subject, spki, Buffer.from([0xa0, 0]));
  const alg = seq(oid('1.2.840.10045.4.3.2'));
  const der = seq(info, alg, bitString(sign('sha256', info, key)));
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE REQUEST-----\n`;
}

function csrBody(name: string, request64: string): string {
  return JSON.stringify({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: request64, signerName: 'kubernetes.io/kube-apiserver-client', usages: USAGES },
  });
}

/** Calls `onIssued(name)` for each watch event of a request that carries a certificate. */
function watchIssued(server: ServerContext, onIssued: (name: string) => void): () => void {
  const req = request({ host: '127.0.0.1', port: server.port, servername: 'localhost', path: `${CSRS}?watch=1`, ...server.tls }, (res) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const ev = JSON.parse(buf.slice(0, nl)) as { object: { metadata: { name: string }; status?: { certificate?: string } } };
        buf = buf.slice(nl + 1);
        if (ev.object.status?.certificate) onIssued(ev.object.metadata.name);
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return () => req.destroy();
}

/** Every create sends a request of its own, with a key of its own (the server remembers recent requests' parses). */
async function createRates(call: Call, requests: readonly string[]): Promise<{ csr: Rate; configMap: Rate }> {
  let n = 0;
  const made = () => n;
  const cm = () =>
    measuredRate(
      () =>
        rateLoop('CREATE configmap', async () => {
          const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n++}` }, data: { a: 'b' } });
          return (await call('POST', '/api/v1/namespaces/default/configmaps', body, 'application/json')).status === 201;
        }),
      made,
    );
  const csr = () =>
    measuredRate(
      () =>
        rateLoop('CREATE certificatesigningrequest', async () => {
          const i = n++;
          return (await call('POST', CSRS, csrBody(`rate-${i}`, requests[i % requests.length]!), 'application/json')).status === 201;
        }),
      made,
    );
  // A warm-up round (not counted): the first window of each path is compiled code's first run.
  await cm();
  await csr();
  // Mirrored rounds (ConfigMap, CSR, CSR, ConfigMap, …): drift of a shared machine lands on both.
  const rates = { configMap: [] as Rate[], csr: [] as Rate[] };
  for (let round = 0; round < 2; round++) {
    rates.configMap.push(await cm());
    rates.csr.push(await csr());
    rates.csr.push(await csr());
    rates.configMap.push(await cm());
  }
  return { csr: meanRate(rates.csr), configMap: meanRate(rates.configMap) };
}

async function approveToCertificate(call: Call, server: ServerContext, requests: readonly string[], count: number): Promise<Samples> {
  const waiting = new Map<string, { approvedAt: number; done: () => void }>();
  const stop = watchIssued(server, (name) => {
    const w = waiting.get(name);
    if (!w) return;
    waiting.delete(name);
    samples.add(performance.now() - w.approvedAt);
    w.done();
  });
  const samples = new Samples();
  try {
    for (let i = 0; i < count; i++) {
      const name = `latency-${i}`;
      const created = await call('POST', CSRS, csrBody(name, requests[i]!), 'application/json');
      if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${created.text.slice(0, 200)}`);
      const csr = JSON.parse(created.text) as Record<string, unknown>;
      csr['status'] = { conditions: [{ type: 'Approved', status: 'True', reason: 'Bench', message: 'approved by the bench' }] };
      const issued = new Promise<void>((resolve) => waiting.set(name, { approvedAt: 0, done: resolve }));
      const approved = await call('PUT', `${CSRS}/${name}/approval`, JSON.stringify(csr), 'application/json');
      if (approved.status !== 200) throw new Error(`approve ${name}: ${approved.status} ${approved.text.slice(0, 200)}`);
      const w = waiting.get(name);
      // The event may arrive before the approval's answer: it then counts 0.
      if (w) w.approvedAt = performance.now();
      else samples.add(0);
      await issued;
    }
  } finally {
    stop();
  }
  return samples;
}

export async function runCsrBench(): Promise<void> {
  const requests = Array.from({ length: 5000 }, (_, i) => Buffer.from(csrPem(`bench-user-${i}`)).toString('base64'));
  await withInProcessServer('csr', async (call, server) => {
    console.log(`\nCertificateSigningRequests (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    const latency = await approveToCertificate(call, server, requests.slice(-100), 100);
    const { p50, p99 } = latency.summary();
    console.log(`  ${'approve → certificate (100 requests)'.padEnd(48)} p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms   (target p99 ≤ 200 ms)`);
    recordRow({ name: 'CSR approve → issued certificate p99 (100 requests, in process)', value: p99, unit: 'ms', target: 'p99 ≤ 200 ms', atMost: 200 });
    const rates = await createRates(call, requests);
    const { csr, configMap } = rates;
    console.log(`  ${'CSR create / ConfigMap create'.padEnd(48)} ${((100 * csr.rate) / configMap.rate).toFixed(0).padStart(7)} %   (target ≥ 70%)`);
    console.log(
      `  ${'CPU per create: ConfigMap, CSR, ratio'.padEnd(48)} ${configMap.cpu.toFixed(3)} ms, ${csr.cpu.toFixed(3)} ms, ${((100 * configMap.cpu) / csr.cpu).toFixed(0)} %`,
    );
    recordRow({
      name: 'CSR create (ECDSA P-256) vs ConfigMap create (in process)',
      value: csr.rate,
      unit: 'req/s',
      baseline: configMap.rate,
      target: '≥ 70%',
      atLeast: 0.7,
    });
    // What a create could reach if everything but the unavoidable key import and verify cost what a ConfigMap's does.
    const floor = await csrFloor();
    printFloor(floor);
    const p256 = floor.find((r) => r.algorithm === 'ECDSA P-256')!;
    const ceiling = (floorMicros: number) => ((100 * configMap.cpu) / (configMap.cpu + floorMicros / 1000)).toFixed(0);
    console.log(
      `  ${'ceiling: ConfigMap CPU / (it + P-256 floor)'.padEnd(48)} ${ceiling(p256.importAndVerifyAsync)} % as a create imports (async), ${ceiling(p256.importAndVerify)} % sync import warm, ${ceiling(p256.importAndVerifyCold)} % cold`,
    );
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runCsrBench();
