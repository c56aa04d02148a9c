// Shared steps of the started-server flowcontrol tests: a test priority
// level with its FlowSchema for one user, waiting until the server
// classifies that user's requests there, and a request the test can cut.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { TestServer } from '../helpers/server.js';
import type { Reply } from '../helpers/client.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';
export const PL_UID = 'x-kubernetes-pf-prioritylevel-uid';
export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * A Limited level `name` (its `limited` spec as given) and a FlowSchema of
 * the same name sending every resource request of `user` (or of a group,
 * `group:<name>`) there, one flow per user (ByUser); resolves once `probe`
 * (a request of such a user) is classified at the level.
 */
export async function userLevel(s: TestServer, name: string, user: string, limited: Record<string, unknown>, probe: () => Promise<Reply>): Promise<string> {
  const subject = user.startsWith('group:') ? { kind: 'Group', group: { name: user.slice(6) } } : { kind: 'User', user: { name: user } };
  const pl = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: { type: 'Limited', limited },
  });
  assert.equal(pl.status, 201, pl.text);
  const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name },
      matchingPrecedence: 400,
      distinguisherMethod: { type: 'ByUser' },
      rules: [{ subjects: [subject], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }] }],
    },
  });
  assert.equal(fs.status, 201, fs.text);
  const uid = (pl.json as { metadata: { uid: string } }).metadata.uid;
  for (let i = 0; i < 50; i++) {
    if ((await probe()).headers[PL_UID] === uid) return uid;
    await sleep(100);
  }
  throw new Error(`requests of ${user} never reached level ${name}`);
}

export interface CutRequest {
  /** The status once the answer's headers arrive (0 if cut first). */
  readonly headers: Promise<number>;
  /** The status once the answer has ended (0 if cut first). */
  readonly done: Promise<number>;
  abort(): void;
}

/** A GET with a bearer token on its own connection, which the test may cut at any time. */
export function cutRequest(s: TestServer, token: string, path: string): CutRequest {
  const ac = new AbortController();
  let headers!: (n: number) => void;
  let done!: (n: number) => void;
  const h = new Promise<number>((r) => {
    headers = r;
  });
  const d = new Promise<number>((r) => {
    done = r;
  });
  const ca = (s.anonymous.agent.options as { ca?: string }).ca;
  const req = httpsRequest(new URL(path, s.url), { agent: false, ca, headers: { authorization: `Bearer ${token}` }, signal: ac.signal }, (res) => {
    headers(res.statusCode ?? 0);
    res.resume();
    res.on('end', () => done(res.statusCode ?? 0));
    res.on('error', () => done(0));
    res.on('close', () => done(0));
  });
  req.on('error', () => {
    headers(0);
    done(0);
  });
  req.end();
  return { headers: h, done: d, abort: () => ac.abort() };
}
