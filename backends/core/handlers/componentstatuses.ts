// core/v1 ComponentStatuses (deprecated since 1.19), answered as
// kube-apiserver's componentstatus REST answers them: nothing stored, each
// component checked on every get and list. kube checks etcd through its
// storage, and the scheduler and controller-manager at their default secure
// ports on the loopback. Gatehouse's store stands in for etcd (`etcd-0`); the
// controllers kube-controller-manager runs live in this process, so they are
// healthy while it answers; the scheduler is probed where kube probes it
// (Gatehouse runs none).
import { request } from 'node:https';
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { methodNotAllowed, StatusError } from '../../../lib/api/status.js';
import { encode, sendBody, sendObject, wantsPretty } from '../../../lib/http/respond.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { buildSelection } from '../listoptions.js';
import { listAs, listJson, objectAs, outputFor } from '../render.js';

/** kube's probeTimeOut. */
const PROBE_TIMEOUT_MS = 20_000;
/** kubeschedulerconfig.DefaultKubeSchedulerPort. */
const SCHEDULER = { host: '127.0.0.1', port: 10259, path: '/healthz' };

interface Check {
  readonly healthy: boolean | undefined;
  readonly message: string;
  readonly error: string;
}

/** HttpServer.DoServerCheck: a 2xx or 3xx answer is healthy, its body the message. */
function probeHttps(target: typeof SCHEDULER): Promise<Check> {
  const url = `https://${target.host}:${target.port}${target.path}`;
  return new Promise((resolve) => {
    const req = request({ host: target.host, port: target.port, path: target.path, rejectUnauthorized: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () => {
        const code = res.statusCode ?? 0;
        resolve(
          code >= 200 && code < 400
            ? { healthy: true, message: body, error: '' }
            : { healthy: false, message: body, error: `HTTP probe failed with statuscode: ${code}` },
        );
      });
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Go's words for the usual failure, so the column reads as kube's.
      const why = err.code === 'ECONNREFUSED' ? `dial tcp ${target.host}:${target.port}: connect: connection refused` : err.message;
      resolve({ healthy: false, message: '', error: `Get "${url}": ${why}` });
    });
    req.end();
  });
}

async function storeCheck(env: CoreEnv): Promise<Check> {
  try {
    await env.store.check();
    return { healthy: true, message: 'ok', error: '' };
  } catch (err) {
    return { healthy: false, message: '', error: (err as Error).message };
  }
}

/** The components kube lists, by name. */
function components(env: CoreEnv): ReadonlyMap<string, () => Promise<Check>> {
  return new Map([
    ['controller-manager', async () => ({ healthy: true, message: 'ok', error: '' })],
    ['etcd-0', () => storeCheck(env)],
    ['scheduler', () => probeHttps(SCHEDULER)],
  ]);
}

function statusOf(name: string, c: Check): KObject {
  const condition: Record<string, string> = { type: 'Healthy', status: c.healthy === undefined ? 'Unknown' : c.healthy ? 'True' : 'False' };
  if (c.message) condition['message'] = c.message;
  if (c.error) condition['error'] = c.error;
  // Never stored, so never created: Go writes the zero creation time as null.
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name, creationTimestamp: null }, conditions: [condition] } as unknown as KObject;
}

/** GET and LIST of componentstatuses; every other verb is refused, as kube's REST implements only these. */
export async function serveComponentStatuses(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  const pretty = wantsPretty(r.req, r.query);
  const all = components(env);
  const name = r.info.name;
  if (r.info.verb === 'get') {
    const check = all.get(name);
    // kube's REST answers with a plain error, which its handler turns into a 500 without a reason.
    if (!check) throw new StatusError(500, undefined, `Component not found: ${name}`);
    sendObject(r, 200, objectAs(t, statusOf(name, await check()), out, r.query, env.clock()), out, pretty);
    return;
  }
  if (r.info.verb !== 'list') throw methodNotAllowed(r.req.method ?? '', t.plural);
  const { identity, content } = buildSelection(t, r.query);
  const names = [...all.keys()].sort();
  const items = (await Promise.all(names.map(async (n) => statusOf(n, await all.get(n)!())))).filter(
    (o) => (!identity || identity(o)) && (!content || content(o)),
  );
  const meta = {};
  const shaped = listAs(t, items, meta, out, r.query, env.clock());
  sendBody(r, 200, out.contentType, shaped ? encode(shaped, out, pretty) : listJson(t, items, meta));
}
