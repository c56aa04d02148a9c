import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateCa } from '../../certs/pki.js';
import { jwtFromFlags, parseAuthenticationConfig, type AuthenticationConfig } from '../../gateway/config/authnconfig.js';
import { parseServeFlags } from '../../gateway/config/flags.js';

const ok = (text: string): AuthenticationConfig => {
  const r = parseAuthenticationConfig(text, 'authn.yaml');
  if ('error' in r) assert.fail(r.error);
  return r.config;
};
const bad = (text: string, opts = {}): string => {
  const r = parseAuthenticationConfig(text, 'authn.yaml', opts);
  assert.ok('error' in r, 'expected a validation error');
  return r.error;
};

const minimal = `
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://issuer.example.com
    audiences: [gatehouse]
  claimMappings:
    username:
      claim: sub
      prefix: "oidc:"
`;

test('a minimal configuration parses into frozen typed objects', () => {
  const c = ok(minimal);
  assert.equal(c.jwt.length, 1);
  assert.equal(c.jwt[0]!.issuer.url, 'https://issuer.example.com');
  assert.deepEqual(c.jwt[0]!.issuer.audiences, ['gatehouse']);
  assert.deepEqual(c.jwt[0]!.claimMappings.username, { claim: 'sub', prefix: 'oidc:' });
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.jwt) && Object.isFrozen(c.jwt[0]) && Object.isFrozen(c.jwt[0]!.issuer));
  assert.ok(!c.jwt[0]!.signingAlgs.some((a) => a === 'none' || a.startsWith('HS')));
});

test('v1alpha1, v1beta1 and v1 are accepted, in YAML or JSON', () => {
  for (const v of ['v1alpha1', 'v1beta1', 'v1']) ok(minimal.replace('v1beta1', v));
  ok(
    JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [{ issuer: { url: 'https://a.example', audiences: ['x'] }, claimMappings: { username: { expression: 'claims.sub' } } }],
    }),
  );
});

test('a wrong apiVersion or kind is named', () => {
  assert.match(bad(minimal.replace('v1beta1', 'v2')), /apiVersion: Unsupported value: "apiserver\.config\.k8s\.io\/v2"/);
  assert.match(bad(minimal.replace('kind: AuthenticationConfiguration', 'kind: Other')), /kind: Unsupported value: "Other"/);
  assert.match(bad('not: [valid'), /^invalid authentication configuration "authn\.yaml": /);
});

test('a missing username mapping names the field path', () => {
  const e = bad(minimal.replace(/  claimMappings:[\s\S]*$/, '  claimMappings:\n    username: {}\n'));
  assert.match(e, /jwt\[0\]\.claimMappings\.username\.claim: Required value/);
});

test('the username prefix is required with a claim and forbidden with an expression', () => {
  assert.match(
    bad(minimal.replace('      prefix: "oidc:"\n', '')),
    /jwt\[0\]\.claimMappings\.username\.prefix: Required value: prefix is required when claim is set/,
  );
  assert.match(
    bad(minimal.replace('claim: sub', 'expression: claims.sub')),
    /jwt\[0\]\.claimMappings\.username\.prefix: Invalid value: "oidc:": may not be specified when expression is set/,
  );
  assert.match(
    bad(minimal.replace('claim: sub', 'claim: sub\n      expression: claims.sub')),
    /jwt\[0\]\.claimMappings\.username: Invalid value: "": claim and expression can't both be set/,
  );
});

test('issuer rules: https, no query, audiences, match policy, discoveryURL different and unique', () => {
  assert.match(
    bad(minimal.replace('https://issuer.example.com', 'http://issuer.example.com')),
    /jwt\[0\]\.issuer\.url: Invalid value: "http:\/\/issuer\.example\.com": URL scheme must be https/,
  );
  assert.match(bad(minimal.replace('https://issuer.example.com', 'https://issuer.example.com?x=1')), /jwt\[0\]\.issuer\.url: .*must not contain a query/);
  assert.match(bad(minimal.replace('    audiences: [gatehouse]\n', '')), /jwt\[0\]\.issuer\.audiences: Required value/);
  assert.match(
    bad(minimal.replace('[gatehouse]', '[a, b]')),
    /jwt\[0\]\.issuer\.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences/,
  );
  ok(minimal.replace('[gatehouse]', '[a, b]\n    audienceMatchPolicy: MatchAny'));
  assert.match(bad(minimal.replace('[gatehouse]', '[a, a]\n    audienceMatchPolicy: MatchAny')), /jwt\[0\]\.issuer\.audiences\[1\]: Duplicate value: "a"/);
  assert.match(bad(minimal.replace('[gatehouse]', '[a]\n    audienceMatchPolicy: MatchAll')), /audienceMatchPolicy: Unsupported value: "MatchAll"/);
  assert.match(
    bad(minimal.replace('    audiences', '    discoveryURL: https://issuer.example.com/\n    audiences')),
    /jwt\[0\]\.issuer\.discoveryURL: .*discoveryURL must be different from URL/,
  );
  assert.match(bad(minimal, { disallowedIssuers: ['https://issuer.example.com'] }), /jwt\[0\]\.issuer\.url: .*must not overlap with disallowed issuers/);
});

test('the certificate authority must be PEM certificates', () => {
  assert.match(
    bad(minimal.replace('    audiences', '    certificateAuthority: nonsense\n    audiences')),
    /jwt\[0\]\.issuer\.certificateAuthority: Invalid value/,
  );
  const ca = generateCa('x').certPem;
  const c = ok(
    minimal.replace(
      '    audiences',
      `    certificateAuthority: |\n${ca
        .trim()
        .split('\n')
        .map((l) => `      ${l}`)
        .join('\n')}\n    audiences`,
    ),
  );
  assert.equal(c.jwt[0]!.issuer.certificateAuthority?.replace(/\r/g, '').trim(), ca.replace(/\r/g, '').trim());
});

test('issuer urls must be unique across authenticators', () => {
  const two = minimal + minimal.slice(minimal.indexOf('- issuer'));
  assert.match(bad(two), /jwt\[1\]\.issuer\.url: Duplicate value: "https:\/\/issuer\.example\.com"/);
});

test('at most 64 jwt authenticators', () => {
  const one = (i: number) => `- issuer: {url: "https://i${i}.example", audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`;
  const head = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n';
  assert.equal(ok(head + Array.from({ length: 64 }, (_, i) => one(i)).join('')).jwt.length, 64);
  assert.match(bad(head + Array.from({ length: 65 }, (_, i) => one(i)).join('')), /jwt: Too many: 65: must have at most 64 items/);
});

test('unknown fields are reported with their path', () => {
  assert.match(bad(minimal.replace('    audiences', '    audience: x\n    audiences')), /jwt\[0\]\.issuer\.audience: unknown field/);
});

test('claim validation rules take a claim with a required value or a CEL expression', () => {
  const c = ok(`${minimal}  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: "claims.exp - claims.iat <= 3600"
    message: token lives too long
`);
  assert.equal(c.jwt[0]!.claimValidationRules.length, 2);
  assert.match(
    bad(`${minimal}  claimValidationRules:\n  - expression: "claims.exp <"\n`),
    /jwt\[0\]\.claimValidationRules\[0\]\.expression: Invalid value: "claims\.exp <": compilation failed for expression/,
  );
  assert.match(bad(`${minimal}  claimValidationRules:\n  - expression: "claim.x == 1"\n`), /undeclared reference to "claim"/);
  assert.match(bad(`${minimal}  claimValidationRules:\n  - {}\n`), /jwt\[0\]\.claimValidationRules\[0\]: Required value/);
  assert.match(bad(`${minimal}  claimValidationRules:\n  - claim: a\n  - claim: a\n`), /jwt\[0\]\.claimValidationRules\[1\]\.claim: Duplicate value: "a"/);
});

test('user validation rules are CEL over user', () => {
  const c = ok(`${minimal}  userValidationRules:\n  - expression: "!user.username.startsWith('system:')"\n    message: no system users\n`);
  assert.equal(c.jwt[0]!.userValidationRules[0]!.message, 'no system users');
  assert.match(
    bad(`${minimal}  userValidationRules:\n  - expression: "claims.sub == 'x'"\n`),
    /jwt\[0\]\.userValidationRules\[0\]\.expression: .*undeclared reference to "claims"/,
  );
});

test('a username expression reading claims.email must also read claims.email_verified', () => {
  const withEmail = minimal.replace(/username:\n      claim: sub\n      prefix: "oidc:"/, 'username:\n      expression: "claims.email"');
  assert.match(
    bad(withEmail),
    /jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.email": claims\.email_verified must be used in claimMappings\.username\.expression or claimMappings\.extra\[\*\]\.valueExpression or claimValidationRules\[\*\]\.expression when claims\.email is used in claimMappings\.username\.expression/,
  );
  ok(minimal.replace(/username:\n      claim: sub\n      prefix: "oidc:"/, 'username:\n      expression: "claims.email_verified ? claims.email : \'\'"'));
  ok(`${withEmail}  claimValidationRules:\n  - expression: "claims.email_verified == true"\n`);
});

test('groups, uid and extra mappings are validated', () => {
  const c = ok(
    minimal.replace(
      '      prefix: "oidc:"\n',
      `      prefix: "oidc:"
    groups:
      expression: "claims.groups.map(g, 'g:' + g)"
    uid:
      claim: sub
    extra:
    - key: example.com/team
      valueExpression: claims.team
`,
    ),
  );
  assert.equal(c.jwt[0]!.claimMappings.extra[0]!.key, 'example.com/team');
  const ex = (key: string) =>
    bad(minimal.replace('      prefix: "oidc:"\n', `      prefix: "oidc:"\n    extra:\n    - key: ${key}\n      valueExpression: claims.team\n`));
  assert.match(ex('Example.com/Team'), /jwt\[0\]\.claimMappings\.extra\[0\]\.key: Invalid value: "Example\.com\/Team": key must be lowercase/);
  assert.match(ex('kubernetes.io/x'), /jwt\[0\]\.claimMappings\.extra\[0\]\.key: Forbidden: .*reserved/);
  assert.match(ex('sub.k8s.io/x'), /Forbidden/);
  assert.match(ex('team'), /must be a domain-prefixed path/);
  assert.match(
    bad(minimal.replace('      prefix: "oidc:"\n', '      prefix: "oidc:"\n    groups:\n      claim: groups\n')),
    /jwt\[0\]\.claimMappings\.groups\.prefix: Required value/,
  );
  assert.match(
    bad(minimal.replace('      prefix: "oidc:"\n', '      prefix: "oidc:"\n    uid:\n      claim: sub\n      expression: claims.sub\n')),
    /jwt\[0\]\.claimMappings\.uid: Invalid value: "": claim and expression can't both be set/,
  );
});

test('every problem is reported at once', () => {
  const e = bad(`
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "http://a", audiences: []}
  claimMappings: {username: {}}
- issuer: {audiences: [x]}
  claimMappings: {username: {claim: sub, prefix: ""}}
`);
  for (const f of ['jwt[0].issuer.url', 'jwt[0].issuer.audiences', 'jwt[0].claimMappings.username.claim', 'jwt[1].issuer.url'])
    assert.ok(e.includes(`${f}: `), `${f} in ${e}`);
});

test("the --oidc-* flags become one authenticator with kube's prefix rules", () => {
  const base = {
    issuerUrl: 'https://i.example',
    clientId: 'c',
    usernamePrefix: undefined,
    groupsClaim: undefined,
    groupsPrefix: '',
    requiredClaims: [],
    caPem: undefined,
    signingAlgs: ['RS256'],
  };
  assert.deepEqual(jwtFromFlags({ ...base, usernameClaim: 'sub' }).claimMappings.username, { claim: 'sub', prefix: 'https://i.example#' });
  assert.deepEqual(jwtFromFlags({ ...base, usernameClaim: 'email' }).claimMappings.username, { claim: 'email', prefix: '' });
  assert.deepEqual(jwtFromFlags({ ...base, usernameClaim: 'sub', usernamePrefix: '-' }).claimMappings.username, { claim: 'sub', prefix: '' });
  assert.deepEqual(jwtFromFlags({ ...base, usernameClaim: 'sub', usernamePrefix: 'o:' }).claimMappings.username, { claim: 'sub', prefix: 'o:' });
  const full = jwtFromFlags({ ...base, usernameClaim: 'sub', groupsClaim: 'groups', groupsPrefix: 'g:', requiredClaims: [['hd', 'example.com']] });
  assert.deepEqual(full.claimMappings.groups, { claim: 'groups', prefix: 'g:' });
  assert.deepEqual(full.claimValidationRules, [{ claim: 'hd', requiredValue: 'example.com' }]);
  assert.deepEqual(full.issuer.audiences, ['c']);
  assert.deepEqual(full.signingAlgs, ['RS256']);
});

test('the oidc flags parse and check each other', () => {
  const p = parseServeFlags([
    '--oidc-issuer-url=https://i.example',
    '--oidc-client-id=c',
    '--oidc-required-claim=a=1,b=2',
    '--oidc-required-claim',
    'c=x=y',
    '--oidc-signing-algs=RS256,ES256',
    '--oidc-groups-claim=groups',
    '--oidc-username-prefix=-',
  ]);
  if ('error' in p) assert.fail(p.error);
  assert.deepEqual(p.options.oidcRequiredClaims, [
    ['a', '1'],
    ['b', '2'],
    ['c', 'x=y'],
  ]);
  assert.deepEqual(p.options.oidcSigningAlgs, ['RS256', 'ES256']);
  assert.equal(p.options.oidcUsernameClaim, 'sub');
  const err = (argv: string[]) => {
    const r = parseServeFlags(argv);
    assert.ok('error' in r);
    return r.error;
  };
  assert.match(
    err(['--oidc-issuer-url=http://i.example', '--oidc-client-id=c']),
    /invalid value "http:\/\/i\.example" for --oidc-issuer-url: must be an https URL/,
  );
  assert.match(err(['--oidc-issuer-url=https://i.example']), /--oidc-issuer-url and --oidc-client-id must be given together/);
  assert.match(err(['--oidc-groups-claim=g']), /--oidc-groups-claim requires --oidc-issuer-url/);
  assert.match(
    err(['--oidc-issuer-url=https://i', '--oidc-client-id=c', '--oidc-signing-algs=HS256']),
    /invalid value "HS256" for --oidc-signing-algs: unsupported signing algorithm/,
  );
  assert.match(err(['--oidc-issuer-url=https://i', '--oidc-client-id=c', '--oidc-signing-algs=none']), /invalid value "none" for --oidc-signing-algs/);
  assert.match(
    err(['--oidc-issuer-url=https://i', '--oidc-client-id=c', '--oidc-required-claim=novalue']),
    /invalid value "novalue" for --oidc-required-claim: must be key=value/,
  );
  assert.match(
    err(['--authentication-config=/x.yaml', '--oidc-issuer-url=https://i', '--oidc-client-id=c']),
    /--authentication-config and --oidc-\* flags are mutually exclusive \(given: --oidc-issuer-url, --oidc-client-id\)/,
  );
  assert.match(err(['--authentication-config=/x.yaml', '--oidc-username-claim=email']), /mutually exclusive/);
  assert.match(
    err(['--authentication-config=/x.yaml', '--feature-gates=StructuredAuthenticationConfiguration=false']),
    /--authentication-config requires the StructuredAuthenticationConfiguration feature gate/,
  );
  const cfg = parseServeFlags(['--authentication-config=/x.yaml']);
  assert.ok('options' in cfg && cfg.options.authenticationConfig === '/x.yaml');
});
