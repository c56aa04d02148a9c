// The test client of cg-proxy.mjs's WATCHFLOOR mode, in a worker thread so
// the main thread's CPU is the hop's (or the gateway's) alone: W watches of
// one fresh namespace's widgets through a proxy (node:https, one connection
// each, the body's lines counted), then creates there sent to the backend
// directly (front-proxy certificate and X-Remote-* headers, 4 in flight),
// each one event on every watch. Told {port, ns, w, n}: answers {opened} once
// every watch has its head, then, told {go: true}, {bad} once every watch has
// read its n events; told {close: true}, closes the watches and answers
// {closed}. Its first message is its thread id in /proc.
import { readlinkSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

const { ca, cert, key, backend } = workerData;
const writes = new Agent({ keepAlive: true, ca: backend.ca, cert: backend.cert, key: backend.key, servername: backend.servername, maxSockets: 4 });
const create = (path, name) =>
  new Promise((resolve) => {
    const body = JSON.stringify({ apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name }, spec: { color: 'red' } });
    const r = request(
      {
        host: '127.0.0.1',
        port: backend.port,
        method: 'POST',
        path,
        agent: writes,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...backend.identity },
      },
      (resp) => {
        resp.resume();
        resp.on('end', () => resolve(resp.statusCode === 201));
      },
    );
    r.on('error', () => resolve(false));
    r.end(body);
  });

let round;
parentPort.on('message', async (m) => {
  if (m.close) {
    // Closed only once the parent has read its counters: the proxy's work on a closed watch is not the events'.
    for (const r of round.reqs) r.destroy();
    round.agent.destroy();
    parentPort.postMessage({ closed: true });
    return;
  }
  if (!m.go) {
    const { port, ns, w } = m;
    const path = `/apis/samples.gatehouse.dev/v1/namespaces/${ns}/widgets`;
    const agent = new Agent({ keepAlive: false, ca, cert, key, servername: 'localhost', maxSockets: w });
    const lines = new Array(w).fill(0);
    const reqs = [];
    await Promise.all(
      lines.map(
        (_, i) =>
          new Promise((resolve, reject) => {
            const r = request({ host: '127.0.0.1', port, path: `${path}?watch=1`, agent }, (resp) => {
              if (resp.statusCode !== 200) reject(new Error(`watch answered ${resp.statusCode}`));
              resp.on('data', (d) => {
                for (let k = d.indexOf(10); k !== -1; k = d.indexOf(10, k + 1)) lines[i]++;
              });
              resp.on('error', () => undefined);
              resolve();
            });
            r.on('error', reject);
            r.end();
            reqs.push(r);
          }),
      ),
    );
    round = { path, lines, reqs, agent, n: m.n };
    parentPort.postMessage({ opened: w });
    return;
  }
  const { path, lines, reqs, agent, n } = round;
  let bad = 0;
  let sent = 0;
  let made = 0;
  const lane = async () => {
    while (sent < n)
      if (await create(path, `w${sent++}`)) made++;
      else bad++;
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  while (lines.some((l) => l < made)) await new Promise((r) => setTimeout(r, 5));
  round = { reqs, agent };
  parentPort.postMessage({ bad, made });
});
// /proc/thread-self -> <pid>/task/<tid>
parentPort.postMessage({ tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
