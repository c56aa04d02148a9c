// The test client of cg-proxy.mjs's FLOOR mode, in a worker thread so the
// main thread's CPU is the hop's (or the gateway's) alone: GETs over
// HTTP/1.1 keep-alive (node:https, INFLIGHT sockets, each keeping one request
// in flight), told by the parent {port, path, n}; answers {bad}. Its first
// message is its thread id in /proc (its CPU is left out of the hop's).
import { readlinkSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

const { ca, cert, key, inflight } = workerData;
const agent = new Agent({ keepAlive: true, ca, cert, key, maxSockets: inflight });
const get = (port, path) =>
  new Promise((resolve) => {
    const r = request({ host: '127.0.0.1', port, path, agent, servername: 'localhost' }, (resp) => {
      resp.resume();
      resp.on('end', () => resolve(resp.statusCode === 200));
    });
    r.on('error', () => resolve(false));
    r.end();
  });
parentPort.on('message', async ({ port, path, n }) => {
  let bad = 0;
  const lane = async (k) => {
    for (let i = 0; i < k; i++) if (!(await get(port, path))) bad++;
  };
  await Promise.all(Array.from({ length: inflight }, () => lane(Math.ceil(n / inflight))));
  parentPort.postMessage({ bad });
});
// /proc/thread-self -> <pid>/task/<tid>
parentPort.postMessage({ tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
