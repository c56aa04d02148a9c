// kube-controller-manager's csrcleaner on the server's injected clock: an issued
// request goes when its certificate expires, a denied one an hour after the
// denial, a pending one after a day — and none before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CLIENT_USAGES, csrBody, CSRS, hasOpenssl, makeCsr, withCondition } from './csrkit.js';

const CLIENT = 'kubernetes.io/kube-apiserver-client';
const MIN = 60_000;

describe('csrcleaner', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  let s: TestServer;
  let offset = 0;
  const clock = () => Date.now() + offset;
  const request = hasOpenssl ? makeCsr('/CN=cleaner').csrPem : '';
  let pokes = 0;
  /** Any change of a request wakes the cleaner, which then reads the (advanced) clock. */
  const poke = async () => {
    const r = await s.admin.request('POST', CSRS, csrBody(`poke-${++pokes}`, request, 'example.com/none', CLIENT_USAGES));
    assert.equal(r.status, 201, r.text);
  };
  const exists = async (name: string) => (await s.admin.request('GET', `${CSRS}/${name}`)).status === 200;
  const gone = (name: string) => eventually(`${name} removed`, async () => !(await exists(name)), { timeoutMs: 30_000 });

  before(async () => {
    s = await startTestServer({ hooks: { clock }, flags: ['--controllers=-csrapproving,-serviceaccount,-root-ca-cert-publisher,*'] });
  });
  after(async () => {
    await s?.close();
  });

  it('removes issued requests at expiry, denied ones after an hour, pending ones after a day', async () => {
    for (const name of ['pending', 'denied', 'issued']) {
      const extra = name === 'issued' ? { expirationSeconds: 600 } : {};
      const r = await s.admin.request('POST', CSRS, csrBody(name, request, CLIENT, CLIENT_USAGES, extra));
      assert.equal(r.status, 201, r.text);
      if (name !== 'pending') {
        const decided = await s.admin.request('PUT', `${CSRS}/${name}/approval`, withCondition(r.json, name === 'denied' ? 'Denied' : 'Approved'));
        assert.equal(decided.status, 200, decided.text);
      }
    }
    await eventually('issued', async () => (await s.admin.request('GET', `${CSRS}/issued`)).json.status?.certificate, { timeoutMs: 30_000 });

    offset = 11 * MIN;
    await poke();
    await gone('issued');
    assert.ok((await exists('denied')) && (await exists('pending')));

    offset = 62 * MIN;
    await poke();
    await gone('denied');
    assert.ok(await exists('pending'));

    offset = 24 * 60 * MIN + 2 * MIN;
    await poke();
    await gone('pending');
    assert.ok(await exists('poke-3'), 'a request made now stays');
  });
});
