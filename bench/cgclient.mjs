// The client of bench/cg-sidecar.mjs: N requests with 4 in flight over
// HTTP/1.1 keep-alive with a client certificate, GETs through the sidecar or
// (forwardAuth) forward-auth calls in nginx's contract. In the caller's
// thread (callgrind's default, beside the server), or as a worker thread
// (CLIENT=worker in cg-sidecar.mjs): a worker has a heap of its own, so the
// main thread's allocation and collections are the server's alone.
import { Agent, request } from 'node:https';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

export function makeClient({ port, ca, cert, key, forwardAuth }) {
  const agent = new Agent({ keepAlive: true, ca, cert, key, maxSockets: 4 });
  let bad = 0;
  const FA = {
    host: '127.0.0.1',
    port,
    path: '/gatehouse/forward-auth',
    servername: 'localhost',
    agent,
    headers: { 'X-Original-Method': 'GET', 'X-Original-URI': '/api/v1/items?limit=10', Authorization: 'Bearer cg-token-0123456789abcdef' },
  };
  const GET = { host: '127.0.0.1', port, path: '/api/v1/items', agent, servername: 'localhost' };
  const get = () =>
    new Promise((res) => {
      const r = request(forwardAuth ? { ...FA } : GET, (resp) => {
        resp.resume();
        resp.on('end', () => {
          if (resp.statusCode !== 200) bad++;
          res();
        });
      });
      r.on('error', () => {
        bad++;
        res();
      });
      r.end();
    });
  return {
    async run(n) {
      for (let i = 0; i < n; i += 4) await Promise.all([get(), get(), get(), get()]);
    },
    get bad() {
      return bad;
    },
    destroy: () => agent.destroy(),
  };
}

/** The client as a worker thread: `run` messages with a count, each answered with the bad count so far once done. */
export function clientWorker(options) {
  return import('node:worker_threads').then(({ Worker }) => {
    const w = new Worker(new URL(import.meta.url), { workerData: options });
    return {
      run: (n) =>
        new Promise((res) => {
          w.once('message', (bad) => res(bad));
          w.postMessage(n);
        }),
      stop: () => w.terminate(),
    };
  });
}

if (!isMainThread && workerData?.port) {
  const c = makeClient(workerData);
  parentPort.on('message', async (n) => {
    await c.run(n);
    parentPort.postMessage(c.bad);
  });
}
