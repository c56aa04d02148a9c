// The handler chain on a plain HTTP server, with inline authenticators,
// authorizers and (for priority and fairness) a flow-control fake: every
// failure answers its Status with the reason kube gives it, and whatever the
// request ends in (an answer, a refusal, the client going, a deadline, a
// watch that initialized) its seat is given back — the in-flight gauge
// (apiserver_current_inflight_requests, counted by the limiter) and the fake's
// held seats return to zero.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHandlerChain, type ChainConfig } from '../../gateway/pipeline/chain.js';
import { InflightLimiter } from '../../gateway/pipeline/inflight.js';
import type { RequestContext } from '../../gateway/pipeline/context.js';
import type { Seat } from '../../gateway/pipeline/seat.js';
import { identityHeaderNames } from '../../gateway/authn/requestheader.js';
import { inflight } from '../../gateway/metrics/requests.js';
import { metricsText } from '../../gateway/metrics/registry.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';

/** apiserver_request_terminations_total of GETs of one ConfigMap, by code. */
async function terminations(code: string): Promise<number> {
  const m = parseMetrics((await metricsText()).body);
  return samples(m, 'apiserver_request_terminations_total', { verb: 'GET', resource: 'configmaps', scope: 'resource', code }).reduce(
    (n, x) => n + Number(x.value),
    0,
  );
}
import { tooManyRequests, unauthorized } from '../../lib/api/status.js';

const CM = '/api/v1/namespaces/default/configmaps';

/** What a test's dispatch does with a request, by the last segment of its path; the default answers 200. */
type Behaviour = (ctx: RequestContext) => Promise<void>;

/** Seats of the priority-and-fairness fake: handed out at once, or queued (never dispatched) for paths ending in /queued. */
class FlowControlFake {
  held = 0;
  admit(ctx: RequestContext): Seat | Promise<Seat> {
    if (ctx.info.name === 'queued') {
      // As the dispatcher's queue: waiting marks the request queued, and its deadline answers 429, not 504.
      ctx.queued = true;
      return new Promise<Seat>((_, reject) =>
        ctx.cancel.onAbort(() => {
          ctx.queued = false;
          reject(tooManyRequests('Too many requests, please try again later.', 1));
        }),
      );
    }
    this.held++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.held--;
      },
    };
  }
}

interface Answer {
  status: number;
  body: string;
}

class ChainServer {
  server!: Server;
  readonly behaviours = new Map<string, Behaviour>();
  readonly dispatched: string[] = [];
  constructor(private readonly extra: Partial<ChainConfig>) {}

  async start(): Promise<void> {
    const handler = buildHandlerChain({
      authenticator: {
        authenticate: async (req) => {
          if (req.headers.authorization !== 'Bearer alice') throw unauthorized();
          return { user: { username: 'alice', groups: ['system:authenticated'] } };
        },
      },
      identityHeaders: identityHeaderNames(undefined),
      impersonation: false,
      authorizer: {
        name: 'by-name',
        authorize: async (attrs) => {
          if (attrs.name === 'denied') return { kind: 'deny', reason: 'not this one' };
          if (attrs.name === 'broken') return { kind: 'no-opinion', reason: '', error: 'the webhook did not answer' };
          return { kind: 'allow', reason: '' };
        },
      },
      inflight: new InflightLimiter(1, 1),
      requestTimeoutMs: 60_000,
      dispatch: async (ctx) => {
        this.dispatched.push(ctx.info.name);
        const b = this.behaviours.get(ctx.info.name);
        if (b) await b(ctx);
        else ctx.res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      },
      log: () => undefined,
      clock: Date.now,
      ...this.extra,
    });
    this.server = createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }

  stop(): Promise<void> {
    return new Promise<void>((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }

  /** Sends a GET as alice (or with `token`); `sent` gets the client request, to abort it. */
  get(path: string, token = 'alice', sent?: (req: ReturnType<typeof request>) => void): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: (this.server.address() as AddressInfo).port, path, agent: false, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject).end();
      sent?.(req);
    });
  }
}

const seatsInUse = () => inflight.readOnly + inflight.mutating;

/** A promise and its resolve, for a dispatch that waits on the test. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('the handler chain', () => {
  describe('with the plain in-flight limit', () => {
    const s = new ChainServer({});
    before(() => s.start());
    after(() => s.stop());

    const failures: { name: string; path: string; token?: string; code: number; reason: string; message?: RegExp }[] = [
      { name: 'a failed authentication', path: `${CM}/x`, token: 'mallory', code: 401, reason: 'Unauthorized' },
      { name: "the authorizer's denial", path: `${CM}/denied`, code: 403, reason: 'Forbidden', message: /not this one/ },
      { name: "an authorizer's error", path: `${CM}/broken`, code: 500, reason: 'InternalError', message: /the webhook did not answer/ },
      { name: 'a path authorization could read differently', path: `${CM}/a%2Fb`, code: 400, reason: 'BadRequest' },
      {
        name: 'a bad timeout parameter',
        path: `${CM}/x?timeout=soon`,
        code: 400,
        reason: 'BadRequest',
        message: /invalid timeout specified in the request URL/,
      },
    ];
    for (const f of failures) {
      it(`answers ${f.name} with ${f.code} ${f.reason}, and holds no seat after`, async () => {
        const dispatched = s.dispatched.length;
        const a = await s.get(f.path, f.token);
        assert.equal(a.status, f.code, a.body);
        const status = JSON.parse(a.body);
        assert.equal(status.kind, 'Status');
        assert.equal(status.code, f.code);
        assert.equal(status.reason, f.reason);
        if (f.message) assert.match(status.message, f.message);
        assert.equal(s.dispatched.length, dispatched, 'not dispatched');
        assert.equal(seatsInUse(), 0);
      });
    }

    it('answers 429 TooManyRequests while the one read-only seat is held, and counts the seat while it is', async () => {
      const started = gate();
      const release = gate();
      s.behaviours.set('hold', async (ctx) => {
        started.open();
        await release.promise;
        ctx.res.writeHead(200).end();
      });
      const holder = s.get(`${CM}/hold`);
      await started.promise;
      assert.equal(inflight.readOnly, 1);
      const terminated = await terminations('429');
      const refused = await s.get(`${CM}/x`);
      assert.equal(refused.status, 429);
      assert.equal(await terminations('429'), terminated + 1, 'a refusal of the limit counts as a termination');
      const status = JSON.parse(refused.body);
      assert.equal(status.reason, 'TooManyRequests');
      assert.deepEqual(status.details, { retryAfterSeconds: 1 });
      release.open();
      assert.equal((await holder).status, 200);
      assert.equal(seatsInUse(), 0);
    });

    it('gives the seat back when the client goes while dispatch waits', async () => {
      const started = gate();
      const closed = gate();
      s.behaviours.set('abandoned', async (ctx) => {
        ctx.res.once('close', closed.open);
        started.open();
        await closed.promise;
      });
      let client!: ReturnType<typeof request>;
      const answer = s.get(`${CM}/abandoned`, 'alice', (r) => (client = r)).catch((err: Error) => err);
      await started.promise;
      assert.equal(seatsInUse(), 1);
      client.destroy();
      await closed.promise;
      assert.ok((await answer) instanceof Error);
      assert.equal(seatsInUse(), 0);
    });

    it('answers 504 Timeout at the deadline while dispatch waits, naming what it waited on', async () => {
      s.behaviours.set('slow', async (ctx) => {
        ctx.waitingOn = 'the slow backend';
        // Dispatch waits for the deadline, as a proxy does, and then answers nothing itself.
        await new Promise<void>((r) => ctx.cancel.onAbort(r));
      });
      const a = await s.get(`${CM}/slow?timeout=100ms`);
      assert.equal(a.status, 504);
      const status = JSON.parse(a.body);
      assert.equal(status.reason, 'Timeout');
      assert.match(status.message, /no answer from the slow backend within 100ms/);
      assert.equal(seatsInUse(), 0);
    });
  });

  describe('with priority and fairness', () => {
    const fc = new FlowControlFake();
    const s = new ChainServer({ flowControl: fc });
    before(() => s.start());
    after(() => s.stop());

    it("gives a watch's seat back once it is initialized, while the watch stays open", async () => {
      let heldBefore = -1;
      let heldAfter = -1;
      s.behaviours.set('', async (ctx) => {
        heldBefore = fc.held;
        ctx.watchInitialized?.();
        heldAfter = fc.held;
        ctx.res.writeHead(200, { 'content-type': 'application/json' }).end();
      });
      const a = await s.get(`${CM}?watch=1`);
      s.behaviours.delete('');
      assert.equal(a.status, 200);
      assert.equal(heldBefore, 1);
      assert.equal(heldAfter, 0);
      assert.equal(fc.held, 0);
    });

    it('answers 429 TooManyRequests, not 504, when the deadline passes while the request is queued', async () => {
      const dispatched = s.dispatched.length;
      const terminated = await terminations('429');
      const a = await s.get(`${CM}/queued?timeout=100ms`);
      assert.equal(a.status, 429);
      assert.equal(await terminations('429'), terminated + 1, "the queue's refusal counts as a termination");
      assert.equal(JSON.parse(a.body).reason, 'TooManyRequests');
      assert.equal(s.dispatched.length, dispatched, 'not dispatched');
      assert.equal(fc.held, 0);
    });

    it('holds a seat for an ordinary request until its answer is handed over', async () => {
      let held = -1;
      s.behaviours.set('counted', async (ctx) => {
        held = fc.held;
        ctx.res.writeHead(200).end();
      });
      assert.equal((await s.get(`${CM}/counted`)).status, 200);
      assert.equal(held, 1);
      assert.equal(fc.held, 0);
    });
  });
});
