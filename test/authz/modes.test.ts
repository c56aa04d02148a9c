// The authorizer factories table: every mode of --authorization-mode and of
// the configuration file builds its authorizer from the same table (each
// deciding as its mode does), the shared ones (Node, RBAC) once, a webhook
// leaves its closer; an unknown mode is refused in its source's words.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCoreBackend, type RunningCoreBackend } from '../../backends/core/index.js';
import { AUTHORIZER_TYPES, type AuthorizerSpec, type AuthorizerType } from '../../gateway/authz/config.js';
import { AUTHORIZER_FACTORIES, factoryFor, type ModeContext } from '../../gateway/authz/modes.js';
import { startRbac, type RunningRbac } from '../../gateway/authz/rbac/index.js';
import { SharedAuthorizers } from '../../gateway/authz/shared.js';
import type { Attributes, Authorizer, DecisionKind } from '../../gateway/authz/types.js';
import { AUTHORIZATION_MODES } from '../../gateway/config/options/authorization.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import { startWebhookPeer, type WebhookPeer } from './webhookpeer.js';

const attrs = (username: string, groups: string[], resource: string, name = ''): Attributes => ({
  user: { username, groups },
  verb: 'get',
  isResourceRequest: true,
  path: `/api/v1/${resource}${name ? `/${name}` : ''}`,
  apiGroup: '',
  apiVersion: 'v1',
  namespace: '',
  resource,
  subresource: '',
  name,
});

describe('the authorizer factories', () => {
  let dir: string;
  let core: RunningCoreBackend;
  let rbac: RunningRbac;
  let peer: WebhookPeer;
  let shared: SharedAuthorizers;
  const log = () => undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-modes-'));
    core = await startCoreBackend({
      storageBackend: 'memory',
      dataDir: dir,
      builtins: false,
      historyWindowMs: 60_000,
      registry: builtinRegistry(),
      bodyLimit: 3 << 20,
      log,
    });
    rbac = await startRbac(core.objects, log);
    peer = await startWebhookPeer();
    shared = new SharedAuthorizers({
      objects: core.objects,
      log,
      nodeWithSelectors: false,
      rbac: () => rbac.authorizer,
    });
  });
  after(async () => {
    shared.close();
    rbac.stop();
    await peer.close();
    await core.close();
    await rm(dir, { recursive: true, force: true });
  });

  const context = (over: Partial<ModeContext> = {}): ModeContext => ({
    index: undefined,
    policyFile: undefined,
    withSelectors: false,
    shared,
    log,
    clock: undefined,
    closers: [],
    ...over,
  });

  it('has one factory per mode of the flag and of the configuration file', () => {
    assert.deepEqual(Object.keys(AUTHORIZER_FACTORIES).sort(), [...AUTHORIZER_TYPES].sort());
    assert.deepEqual(Object.keys(AUTHORIZER_FACTORIES).sort(), [...AUTHORIZATION_MODES].sort());
  });

  const abacLine = JSON.stringify({
    apiVersion: 'abac.authorization.kubernetes.io/v1beta1',
    kind: 'Policy',
    spec: { user: 'alice', resource: '*', namespace: '*', apiGroup: '*' },
  });
  // Per mode: how to make its spec and context, then requests with the decision the mode gives them.
  const cases: Array<{
    mode: AuthorizerType;
    setup?: () => Promise<Partial<ModeContext> & { spec?: Partial<AuthorizerSpec> }>;
    expect: Array<[Attributes, DecisionKind]>;
    closers?: number;
  }> = [
    { mode: 'AlwaysAllow', expect: [[attrs('anyone', [], 'pods'), 'allow']] },
    { mode: 'AlwaysDeny', expect: [[attrs('anyone', ['system:masters'], 'pods'), 'deny']] },
    {
      mode: 'ABAC',
      setup: async () => {
        const policyFile = join(dir, 'abac.jsonl');
        await writeFile(policyFile, `${abacLine}\n`);
        return { policyFile };
      },
      expect: [
        [attrs('alice', [], 'pods'), 'allow'],
        [attrs('bob', [], 'pods'), 'no-opinion'],
      ],
    },
    {
      mode: 'Node',
      expect: [
        [attrs('system:node:n1', ['system:nodes'], 'nodes', 'n1'), 'allow'],
        [attrs('alice', [], 'nodes', 'n1'), 'no-opinion'],
      ],
    },
    // No bindings are stored: RBAC has no opinion on anyone.
    { mode: 'RBAC', expect: [[attrs('alice', ['system:authenticated'], 'pods'), 'no-opinion']] },
    {
      mode: 'Webhook',
      setup: async () => ({
        spec: {
          webhook: {
            authorizedTtlMs: 1000,
            unauthorizedTtlMs: 1000,
            timeoutMs: 5000,
            subjectAccessReviewVersion: 'v1',
            matchConditionSubjectAccessReviewVersion: 'v1',
            failurePolicy: 'NoOpinion',
            kubeConfigFile: await peer.kubeconfig(dir, 'modes'),
            matchConditions: [],
          },
        },
      }),
      expect: [
        [attrs('allow-me', [], 'pods'), 'allow'],
        [attrs('deny-me', [], 'pods'), 'deny'],
      ],
      closers: 1,
    },
  ];

  for (const { mode, setup, expect, closers = 0 } of cases) {
    it(`builds ${mode}`, async () => {
      const { spec: extra, ...over } = (await setup?.()) ?? {};
      const spec: AuthorizerSpec = { type: mode, name: mode.toLowerCase(), ...extra };
      const c = context(over);
      const authorizer: Authorizer = await factoryFor(mode, undefined)(spec, c);
      for (const [a, kind] of expect) assert.equal((await authorizer.authorize(a)).kind, kind, `${mode}: ${a.user.username} ${a.resource}`);
      assert.equal(c.closers.length, closers);
      for (const close of c.closers) close();
    });
  }

  it('makes the shared authorizers once for every chain', async () => {
    let asked = 0;
    const once = new SharedAuthorizers({
      objects: core.objects,
      log,
      nodeWithSelectors: false,
      rbac: () => {
        asked++;
        return rbac.authorizer;
      },
    });
    try {
      const build = async (type: 'Node' | 'RBAC', index: number | undefined) =>
        AUTHORIZER_FACTORIES[type]({ type, name: type.toLowerCase() }, context({ index, shared: once }));
      const first = [await build('Node', undefined), await build('RBAC', undefined)];
      const second = [await build('Node', 0), await build('RBAC', 1)];
      assert.equal(first[0], second[0]);
      assert.equal(first[1], rbac.authorizer);
      assert.equal(second[1], rbac.authorizer);
      assert.equal(asked, 1);
    } finally {
      once.close();
    }
  });

  const refused: Array<[string, string, number | undefined, string]> = [
    [
      'an unknown flag mode',
      'Magic',
      undefined,
      'invalid value "Magic" for --authorization-mode: unknown mode (one of AlwaysAllow, AlwaysDeny, RBAC, Node, ABAC, Webhook)',
    ],
    [
      'an unknown file type',
      'Magic',
      1,
      'authorizers[1].type: Unsupported value: "Magic": supported values: "Webhook", "Node", "RBAC", "ABAC", "AlwaysAllow", "AlwaysDeny"',
    ],
    ['a name the table inherits', 'toString', undefined, 'invalid value "toString" for --authorization-mode: unknown mode'],
    ['__proto__', '__proto__', 0, 'authorizers[0].type: Unsupported value: "__proto__"'],
  ];
  for (const [what, type, index, message] of refused) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => factoryFor(type, index),
        (err: Error) => err.message.startsWith(message),
      );
    });
  }

  const failing: Array<[string, AuthorizerType, () => Partial<ModeContext>, string]> = [
    ['ABAC without a policy file (flags)', 'ABAC', () => ({}), '--authorization-mode.type: Invalid value: "ABAC": requires --authorization-policy-file'],
    ['ABAC without a policy file (file)', 'ABAC', () => ({ index: 2 }), 'authorizers[2].type: Invalid value: "ABAC": requires --authorization-policy-file'],
    [
      'RBAC without the RBAC authorizer',
      'RBAC',
      () => ({ index: 0, shared: new SharedAuthorizers({ objects: core.objects, log, nodeWithSelectors: false, rbac: undefined }) }),
      'authorizers[0].type: Invalid value: "RBAC": the RBAC authorizer is not available',
    ],
  ];
  for (const [what, mode, over, message] of failing) {
    it(`fails ${what}`, async () => {
      const c = context(over());
      await assert.rejects(async () => factoryFor(mode, c.index)({ type: mode, name: 'x' }, c), { message });
    });
  }
});
