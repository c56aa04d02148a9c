// The GET loop of bench/cg-gets.mjs in a process of its own (CLIENT=process):
// valgrind does not follow children, so the server's instructions are then
// counted without the client's. Told the port, TLS and counts by its parent;
// sends 'warm' after the warm-up GETs, waits for 'go', sends 'done' after N.
import { Agent, request } from 'node:https';
import { connect } from 'node:http2';

// CG_PATH: another path to GET (e.g. a LIST of what SEED made: `/api/v1/namespaces/default/configmaps?limit=500`).
const PATH = process.env.CG_PATH ?? '/api/v1/namespaces/default/configmaps/c1';

/**
 * n GETs of the ConfigMap, 4 in flight (INFLIGHT=1..4), over HTTP/2 (one session) or HTTP/1.1 (4 keep-alive
 * connections); the count of failures. INFLIGHT=1: every GET has an event-loop turn of its own, so the count
 * does not move with how many answers a loaded machine lets the server batch per turn. keep: leave the
 * HTTP/2 session or the HTTP/1.1 agent's connections open for the next call (the warm-up's), so a measured run
 * holds no TLS handshake.
 */
export async function runGets(port, who, n, keep = false) {
  let bad = 0;
  const k = Math.min(4, Math.max(1, Number(process.env.INFLIGHT ?? 4)));
  const batch = (f) => Promise.all(Array.from({ length: k }, f));
  if ((process.env.PROTO ?? 'h2') === 'h2') {
    let s = keptSession;
    if (s === undefined) {
      s = connect(`https://127.0.0.1:${port}`, { ...who, servername: 'localhost' });
      await new Promise((r) => s.once('remoteSettings', r));
    }
    const one = () =>
      new Promise((res) => {
        const st = s.request({ ':path': PATH });
        st.on('response', (h) => {
          if (h[':status'] !== 200) bad++;
        });
        st.resume();
        st.on('end', res);
        st.on('error', () => {
          bad++;
          res();
        });
      });
    for (let i = 0; i < n; i += k) await batch(one);
    if (keep) keptSession = s;
    else {
      s.close();
      keptSession = undefined;
    }
    return bad;
  }
  const a = (kept ??= new Agent({ keepAlive: true, ...who, maxSockets: 4 }));
  const get = () =>
    new Promise((res) => {
      const r = request({ host: '127.0.0.1', port, path: PATH, agent: a }, (resp) => {
        if (resp.statusCode !== 200) bad++;
        resp.resume();
        resp.on('end', res);
      });
      r.on('error', () => {
        bad++;
        res();
      });
      r.end();
    });
  for (let i = 0; i < n; i += k) await batch(get);
  if (!keep) {
    a.destroy();
    kept = undefined;
  }
  return bad;
}
let kept;
let keptSession;

// Forked by cg-gets.mjs (CLIENT=process): warm up, wait for the counters to be zeroed, measure.
if (process.send && process.env.CG_PORT) {
  const port = Number(process.env.CG_PORT);
  const who = JSON.parse(process.env.CG_TLS ?? '{}');
  let bad = await runGets(port, who, Number(process.env.WARM ?? 0), true);
  process.send('warm');
  await new Promise((r) => process.once('message', r));
  bad += await runGets(port, who, Number(process.env.N ?? 1000));
  process.send(`done ${bad}`);
  process.disconnect();
}
