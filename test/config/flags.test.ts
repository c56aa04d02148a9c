import { DEFAULT_RUNTIME_CONFIG } from '../../gateway/config/runtimeconfig.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FLAGS, controllerEnabled, parseServeFlags, usage, wantsHelp, type ServeOptions } from '../../gateway/config/flags.js';

function ok(argv: string[]): ServeOptions {
  const r = parseServeFlags(argv);
  if ('error' in r) assert.fail(`unexpected error for ${JSON.stringify(argv)}: ${r.error}`);
  return r.options;
}

function err(argv: string[]): string {
  const r = parseServeFlags(argv);
  if ('options' in r) assert.fail(`expected an error for ${JSON.stringify(argv)}`);
  return r.error;
}

describe('parseServeFlags', () => {
  it('no flags gives the documented defaults', () => {
    assert.deepEqual(
      { ...ok([]) },
      {
        bindAddress: '127.0.0.1',
        securePort: 6443,
        dataDir: './data',
        storageBackend: 'file',
        redisUrl: undefined,
        storagePrefix: 'gatehouse',
        tlsCertFile: undefined,
        tlsPrivateKeyFile: undefined,
        clientCaFiles: [],
        authorizationModes: ['Node', 'RBAC'],
        anonymousAuth: true,
        watchHistoryMs: 300_000,
        livezGracePeriodMs: 0,
        authorizationConfig: undefined,
        authorizationPolicyFile: undefined,
        authorizationWebhookConfigFile: undefined,
        authorizationWebhookVersion: 'v1beta1',
        authorizationWebhookCacheAuthorizedTtlMs: 300_000,
        authorizationWebhookCacheUnauthorizedTtlMs: 30_000,
        enableAdmissionPlugins: [],
        disableAdmissionPlugins: [],
        featureGates: {
          APIResponseCompression: true,
          AuthorizeWithSelectors: true,
          AuthorizeNodeWithSelectors: true,
          StructuredAuthorizationConfiguration: true,
          StructuredAuthenticationConfiguration: true,
          AllowUnsafeMalformedObjectDeletion: false,
          CBORServingAndStorage: false,
        },
        runtimeConfig: DEFAULT_RUNTIME_CONFIG,
        shutdownDelayMs: 0,
        shutdownSendRetryAfter: false,
        maxRequestBodyBytes: 3_145_728,
        verbosity: 0,
        requestTimeoutMs: 60_000,
        minRequestTimeoutS: 1800,
        maxRequestsInflight: 400,
        maxMutatingRequestsInflight: 200,
        enablePriorityAndFairness: true,
        http2MaxStreamsPerConnection: 1000,
        maxConnectionsPerClientAddress: 1000,
        goawayChance: 0,
        authenticationTokenWebhookConfigFile: undefined,
        authenticationTokenWebhookCacheTtlMs: 120_000,
        authenticationTokenWebhookVersion: 'v1beta1',
        requestheaderClientCaFile: undefined,
        requestheaderAllowedNames: [],
        requestheaderUsernameHeaders: [],
        requestheaderUidHeaders: [],
        requestheaderGroupHeaders: [],
        requestheaderExtraHeadersPrefix: [],
        proxyClientCertFile: undefined,
        proxyClientKeyFile: undefined,
        tokenAuthFile: undefined,
        enableBootstrapTokenAuth: false,
        serviceAccountKeyFiles: [],
        serviceAccountSigningKeyFile: undefined,
        serviceAccountIssuers: [],
        serviceAccountLookup: true,
        serviceAccountMaxTokenExpirationMs: 0,
        apiAudiences: [],
        controllers: ['*'],
        resourceQuotaSyncPeriodMs: 300_000,
        leaderElect: true,
        leaderElectLeaseDurationMs: 15_000,
        leaderElectRenewDeadlineMs: 10_000,
        leaderElectRetryPeriodMs: 2_000,
        leaderElectResourceNamespace: 'kube-system',
        leaderElectResourceName: 'gatehouse-controllers',
        identityLeaseDurationSeconds: 3600,
        identityLeaseRenewIntervalSeconds: 10,
        clusterSigningGeneralCertFile: undefined,
        clusterSigningGeneralKeyFile: undefined,
        clusterSigningKubeApiserverClientCertFile: undefined,
        clusterSigningKubeApiserverClientKeyFile: undefined,
        clusterSigningKubeletClientCertFile: undefined,
        clusterSigningKubeletClientKeyFile: undefined,
        clusterSigningKubeletServingCertFile: undefined,
        clusterSigningKubeletServingKeyFile: undefined,
        clusterSigningLegacyUnknownCertFile: undefined,
        clusterSigningLegacyUnknownKeyFile: undefined,
        clusterSigningDurationMs: 8760 * 3600_000,
        oidcIssuerUrl: undefined,
        oidcClientId: undefined,
        oidcUsernameClaim: 'sub',
        oidcUsernamePrefix: undefined,
        oidcGroupsClaim: undefined,
        oidcGroupsPrefix: '',
        oidcRequiredClaims: [],
        oidcCaFile: undefined,
        oidcSigningAlgs: ['RS256'],
        authenticationConfig: undefined,
        upstream: undefined,
        upstreamCaFile: undefined,
        upstreamClientCertFile: undefined,
        upstreamClientKeyFile: undefined,
        resourceAttributesFile: undefined,
        allowPaths: [],
        ignorePaths: [],
        authHeaderFieldsEnabled: false,
        authHeaderUserFieldName: 'x-remote-user',
        authHeaderGroupsFieldName: 'x-remote-groups',
        authHeaderGroupsFieldSeparator: '|',
        kubeconfigFile: undefined,
        proxyEndpointsPort: 0,
        upstreamForceH2c: false,
        insecureListen: undefined,
        tlsMinVersion: 'TLSv1.2',
        tlsCipherSuites: undefined,
        forwardAuthPath: '/gatehouse/forward-auth',
        forwardAuthProxyNames: [],
        forwardAuthTrustedAddresses: [],
        routesFile: undefined,
        coreBackendUrl: undefined,
        coreBackendCaFile: undefined,
        auditPolicyFile: undefined,
        auditLogPath: undefined,
        auditLogMaxAge: 0,
        auditLogMaxBackup: 0,
        auditLogMaxSize: 0,
        auditLogFormat: 'json',
        auditLogCompress: false,
        auditLogMode: 'blocking',
        auditLogVersion: 'audit.k8s.io/v1',
        auditLogBatchBufferSize: 10_000,
        auditLogBatchMaxSize: 1,
        auditLogBatchMaxWaitMs: 0,
        auditLogBatchThrottleEnable: false,
        auditLogBatchThrottleQps: 0,
        auditLogBatchThrottleBurst: 0,
        auditLogTruncateEnabled: false,
        auditLogTruncateMaxBatchSize: 10_485_760,
        auditLogTruncateMaxEventSize: 102_400,
        auditWebhookConfigFile: undefined,
        auditWebhookMode: 'batch',
        auditWebhookInitialBackoffMs: 10_000,
        auditWebhookVersion: 'audit.k8s.io/v1',
        auditWebhookBatchBufferSize: 10_000,
        auditWebhookBatchMaxSize: 400,
        auditWebhookBatchMaxWaitMs: 30_000,
        auditWebhookBatchThrottleEnable: true,
        auditWebhookBatchThrottleQps: 10,
        auditWebhookBatchThrottleBurst: 15,
        auditWebhookTruncateEnabled: false,
        auditWebhookTruncateMaxBatchSize: 10_485_760,
        auditWebhookTruncateMaxEventSize: 102_400,
        tracingConfigFile: undefined,
        showHiddenMetricsForVersion: undefined,
      },
    );
  });

  it('the result is frozen, lists included', () => {
    const o = ok(['--client-ca-file=a']);
    assert.ok(Object.isFrozen(o) && Object.isFrozen(o.clientCaFiles) && Object.isFrozen(o.authorizationModes));
  });

  const good: [string, string[], Partial<ServeOptions>][] = [
    ['--name=value form', ['--secure-port=8443', '--bind-address=0.0.0.0'], { securePort: 8443, bindAddress: '0.0.0.0' }],
    ['--name value form', ['--secure-port', '8443', '--data-dir', '/var/lib/gh'], { securePort: 8443, dataDir: '/var/lib/gh' }],
    ['IPv6 bind address', ['--bind-address', '::'], { bindAddress: '::' }],
    ['the last scalar wins', ['--secure-port=1', '--secure-port=65535'], { securePort: 65535 }],
    ['bare boolean is true', ['--anonymous-auth'], { anonymousAuth: true }],
    ['boolean =false', ['--anonymous-auth=false'], { anonymousAuth: false }],
    ['boolean =0', ['--anonymous-auth=0'], { anonymousAuth: false }],
    ['priority and fairness off', ['--enable-priority-and-fairness=false'], { enablePriorityAndFairness: false }],
    ['memory backend', ['--storage-backend=memory', '--storage-prefix', 'p1'], { storageBackend: 'memory', storagePrefix: 'p1' }],
    [
      'redis on a Unix socket',
      ['--storage-backend=redis', '--redis-url=unix://gh:pw@/run/redis/redis.sock?db=2'],
      { storageBackend: 'redis', redisUrl: 'unix://gh:pw@/run/redis/redis.sock?db=2' },
    ],
    [
      'a redis cluster by its seeds',
      ['--storage-backend=redis', '--redis-url=redis://10.0.0.1:7000,10.0.0.2:7000'],
      { redisUrl: 'redis://10.0.0.1:7000,10.0.0.2:7000' },
    ],
    [
      'client CAs: comma list and repeats accumulate',
      ['--client-ca-file=a.crt,b.crt', '--client-ca-file', 'c.crt'],
      { clientCaFiles: ['a.crt', 'b.crt', 'c.crt'] },
    ],
    ['authorization modes in order', ['--authorization-mode=AlwaysAllow,AlwaysDeny'], { authorizationModes: ['AlwaysAllow', 'AlwaysDeny'] }],
    ['a given mode replaces the default', ['--authorization-mode', 'AlwaysAllow'], { authorizationModes: ['AlwaysAllow'] }],
    [
      'token webhook and authenticating proxy',
      [
        '--authentication-token-webhook-config-file=w.kubeconfig',
        '--authentication-token-webhook-cache-ttl=30s',
        '--authentication-token-webhook-version=v1',
        '--requestheader-client-ca-file=fp.crt',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        '--requestheader-allowed-names=front-proxy-client,aggregator',
        '--requestheader-uid-headers=X-Remote-Uid',
      ],
      {
        authenticationTokenWebhookConfigFile: 'w.kubeconfig',
        authenticationTokenWebhookCacheTtlMs: 30_000,
        authenticationTokenWebhookVersion: 'v1',
        requestheaderClientCaFile: 'fp.crt',
        requestheaderUsernameHeaders: ['X-Remote-User'],
        requestheaderGroupHeaders: ['X-Remote-Group'],
        requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
        requestheaderAllowedNames: ['front-proxy-client', 'aggregator'],
        requestheaderUidHeaders: ['X-Remote-Uid'],
      },
    ],
    [
      'issuers repeat without comma splitting, key files and audiences are lists',
      [
        '--service-account-issuer=https://a',
        '--service-account-issuer',
        'https://b',
        '--service-account-signing-key-file=k',
        '--service-account-key-file=x.pem,y.pem',
        '--api-audiences=a1,a2',
        '--service-account-lookup=false',
        '--service-account-max-token-expiration=24h',
      ],
      {
        serviceAccountIssuers: ['https://a', 'https://b'],
        serviceAccountKeyFiles: ['x.pem', 'y.pem'],
        apiAudiences: ['a1', 'a2'],
        serviceAccountLookup: false,
        serviceAccountMaxTokenExpirationMs: 86_400_000,
        serviceAccountSigningKeyFile: 'k',
      },
    ],
    [
      'token file, bootstrap tokens and controllers',
      ['--token-auth-file=t.csv', '--enable-bootstrap-token-auth', '--controllers=*,-tokencleaner'],
      { tokenAuthFile: 't.csv', enableBootstrapTokenAuth: true, controllers: ['*', '-tokencleaner'] },
    ],
    [
      'durations',
      ['--watch-history=1h30m', '--livez-grace-period', '10s', '--shutdown-delay-duration=300ms'],
      { watchHistoryMs: 5_400_000, livezGracePeriodMs: 10_000, shutdownDelayMs: 300 },
    ],
    ['TLS pair', ['--tls-cert-file=s.crt', '--tls-private-key-file=s.key'], { tlsCertFile: 's.crt', tlsPrivateKeyFile: 's.key' }],
    [
      'leader election',
      [
        '--leader-elect-lease-duration=3s',
        '--leader-elect-renew-deadline=2s',
        '--leader-elect-retry-period=500ms',
        '--leader-elect-resource-namespace=ops',
        '--leader-elect-resource-name=gh.controllers',
      ],
      {
        leaderElectLeaseDurationMs: 3000,
        leaderElectRenewDeadlineMs: 2000,
        leaderElectRetryPeriodMs: 500,
        leaderElectResourceNamespace: 'ops',
        leaderElectResourceName: 'gh.controllers',
      },
    ],
    // Without election the timings are not used, so they are not checked against each other.
    ['no leader election', ['--leader-elect=false', '--leader-elect-renew-deadline=1h'], { leaderElect: false, leaderElectRenewDeadlineMs: 3_600_000 }],
    [
      'identity lease timing',
      ['--identity-lease-duration-seconds=60', '--identity-lease-renew-interval-seconds=5'],
      { identityLeaseDurationSeconds: 60, identityLeaseRenewIntervalSeconds: 5 },
    ],
    ['body limit', ['--max-request-body-bytes=1024'], { maxRequestBodyBytes: 1024 }],
    ['tracing configuration file', ['--tracing-config-file=/etc/gatehouse/tracing.yaml'], { tracingConfigFile: '/etc/gatehouse/tracing.yaml' }],
    ['request deadlines', ['--request-timeout=1m30s', '--min-request-timeout=60'], { requestTimeoutMs: 90_000, minRequestTimeoutS: 60 }],
    ['HTTP/2 limits', ['--http2-max-streams-per-connection=250', '--goaway-chance=0.001'], { http2MaxStreamsPerConnection: 250, goawayChance: 0.001 }],
    ['connections per client address', ['--max-connections-per-client-address=0'], { maxConnectionsPerClientAddress: 0 }],
    [
      'in-flight limits (0 = none)',
      ['--max-requests-inflight=0', '--max-mutating-requests-inflight=7'],
      { maxRequestsInflight: 0, maxMutatingRequestsInflight: 7 },
    ],
    [
      'shutdown as kube: keep listening with Retry-After',
      ['--shutdown-delay-duration=70s', '--shutdown-send-retry-after'],
      { shutdownDelayMs: 70_000, shutdownSendRetryAfter: true },
    ],
    ['-v 3', ['-v', '3'], { verbosity: 3 }],
    ['-v=4', ['-v=4'], { verbosity: 4 }],
    ['-v5', ['-v5'], { verbosity: 5 }],
    ['--v=2', ['--v=2'], { verbosity: 2 }],
    ['a value that starts with a dash', ['--data-dir', '-weird'], { dataDir: '-weird' }],
  ];
  for (const [title, argv, want] of good) {
    it(`accepts ${title}`, () => {
      const o = ok(argv);
      for (const [k, v] of Object.entries(want)) assert.deepEqual(o[k as keyof ServeOptions], v, k);
    });
  }

  const bad: [string[], string][] = [
    [['--foo'], 'unknown flag: --foo'],
    [['--foo=bar'], 'unknown flag: --foo'],
    [['-x'], 'unknown flag: -x'],
    [['serve-me'], 'unexpected argument "serve-me"'],
    [['--anonymous-auth', 'false'], 'unexpected argument "false"'],
    [['--secure-port=x'], 'invalid value "x" for --secure-port: must be an integer between 1 and 65535'],
    [['--secure-port', '0'], 'invalid value "0" for --secure-port: must be an integer between 1 and 65535'],
    [['--secure-port=65536'], 'invalid value "65536" for --secure-port: must be an integer between 1 and 65535'],
    [['--secure-port=-1'], 'invalid value "-1" for --secure-port: must be an integer between 1 and 65535'],
    [['--secure-port'], 'flag needs an argument: --secure-port'],
    [['--bind-address=localhost'], 'invalid value "localhost" for --bind-address: must be an IP address'],
    [['--data-dir='], 'invalid value "" for --data-dir: must not be empty'],
    [['--anonymous-auth=yes'], 'invalid value "yes" for --anonymous-auth: must be true or false'],
    [['--enable-priority-and-fairness=maybe'], 'invalid value "maybe" for --enable-priority-and-fairness: must be true or false'],
    [['--storage-backend=etcd'], 'invalid value "etcd" for --storage-backend: must be one of file, memory, redis'],
    [['--storage-backend=redis'], '--storage-backend=redis requires --redis-url'],
    [['--redis-url=redis://127.0.0.1:6379'], '--redis-url requires --storage-backend=redis'],
    [
      ['--redis-url=http://x'],
      'invalid value "http://x" for --redis-url: want redis://, rediss://, redis+cluster:// or rediss+cluster://[user:password@]host:port[,host:port…][/db][?ca=file], or unix://[user:password@]/path/to/redis.sock[?db=N]',
    ],
    // The password never appears in a message.
    [['--redis-url=redis://u:s3cret@h:99999'], 'invalid value "redis://***@h:99999" for --redis-url: bad port in "h:99999"'],
    [['--redis-url=unix://u:s3cret@/run/r.sock?db=x'], 'invalid value "unix://***@/run/r.sock?db=x" for --redis-url: database must be a number'],
    [['--redis-url=unix:///run/r.sock?ca=x'], 'invalid value "unix:///run/r.sock?ca=x" for --redis-url: unknown parameter "ca" (known for a Unix socket: db)'],
    [['--redis-url=redis://h:1,h:2/3'], 'invalid value "redis://h:1,h:2/3" for --redis-url: a Redis Cluster has no databases other than 0'],
    [['--redis-url=redis://h:1?ca=c.pem'], 'invalid value "redis://h:1?ca=c.pem" for --redis-url: ca= needs rediss://'],
    [['--authorization-mode=ABAC'], '--authorization-mode=ABAC requires --authorization-policy-file'],
    [['--authorization-mode=AlwaysAllow,Webhook'], '--authorization-mode=Webhook requires --authorization-webhook-config-file'],
    [
      ['--authorization-mode=Magic'],
      'invalid value "Magic" for --authorization-mode: unknown mode (one of AlwaysAllow, AlwaysDeny, RBAC, Node, ABAC, Webhook)',
    ],
    [['--authorization-mode=AlwaysAllow,AlwaysAllow'], 'invalid value "AlwaysAllow" for --authorization-mode: mode given more than once'],
    [
      ['--authorization-mode=AlwaysAllow', '--authorization-mode=AlwaysAllow'],
      'invalid value "AlwaysAllow" for --authorization-mode: mode given more than once',
    ],
    [['--authorization-mode='], 'invalid value "" for --authorization-mode: at least one mode is required'],
    [['--watch-history=0s'], 'invalid value "0s" for --watch-history: must be greater than 0'],
    [['--request-timeout=0s'], 'invalid value "0s" for --request-timeout: must be greater than 0'],
    [['--request-timeout=60'], 'invalid value "60" for --request-timeout: missing unit (one of ns, us, ms, s, m, h)'],
    [['--min-request-timeout=0'], 'invalid value "0" for --min-request-timeout: must be a positive number of seconds'],
    [['--min-request-timeout=30m'], 'invalid value "30m" for --min-request-timeout: must be a positive number of seconds'],
    [['--http2-max-streams-per-connection=0'], 'invalid value "0" for --http2-max-streams-per-connection: must be a positive integer'],
    [['--max-connections-per-client-address=-1'], 'invalid value "-1" for --max-connections-per-client-address: must be a non-negative integer'],
    [['--goaway-chance=0.5'], 'invalid value "0.5" for --goaway-chance: must be a number from 0 to 0.02'],
    [['--goaway-chance=1e-3'], 'invalid value "1e-3" for --goaway-chance: must be a number from 0 to 0.02'],
    [['--max-requests-inflight=-1'], 'invalid value "-1" for --max-requests-inflight: must be a non-negative integer'],
    [['--max-mutating-requests-inflight=lots'], 'invalid value "lots" for --max-mutating-requests-inflight: must be a non-negative integer'],
    [['--watch-history=5'], 'invalid value "5" for --watch-history: missing unit (one of ns, us, ms, s, m, h)'],
    [['--livez-grace-period=-1s'], 'invalid value "-1s" for --livez-grace-period: must not be negative'],
    [['--shutdown-delay-duration=soon'], 'invalid value "soon" for --shutdown-delay-duration: must be a duration such as 300ms, 4s or 1h30m'],
    [['--max-request-body-bytes=0'], 'invalid value "0" for --max-request-body-bytes: must be a positive integer'],
    [['-v=loud'], 'invalid value "loud" for -v: must be an integer between 0 and 10'],
    [['--v=11'], 'invalid value "11" for --v: must be an integer between 0 and 10'],
    [['--tls-cert-file=s.crt'], '--tls-cert-file and --tls-private-key-file must be given together'],
    [['--tls-private-key-file=s.key'], '--tls-cert-file and --tls-private-key-file must be given together'],
    [['--oidc-issuer-url=https://issuer'], '--oidc-issuer-url and --oidc-client-id must be given together'],
    [
      ['--oidc-issuer-url', 'http://issuer', '--oidc-client-id=c'],
      'invalid value "http://issuer" for --oidc-issuer-url: must be an https URL; --oidc-issuer-url and --oidc-client-id must be given together',
    ],
    [['--service-account-signing-key-file=sa.key'], '--service-account-signing-key-file requires --service-account-issuer'],
    [['--service-account-issuer=https://issuer'], '--service-account-issuer requires --service-account-signing-key-file'],
    [
      ['--service-account-issuer=https://[x', '--service-account-signing-key-file=k'],
      'invalid value "https://[x" for --service-account-issuer: must be a URL when it contains ":"; --service-account-signing-key-file requires --service-account-issuer',
    ],
    [['--service-account-max-token-expiration=10m'], 'invalid value "10m" for --service-account-max-token-expiration: must be between 1h and 2^32 seconds'],
    [
      [
        '--cluster-signing-cert-file=ca.crt',
        '--cluster-signing-key-file=ca.key',
        '--cluster-signing-kubelet-serving-cert-file=s.crt',
        '--cluster-signing-kubelet-serving-key-file=s.key',
      ],
      'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time',
    ],
    [
      ['--cluster-signing-kube-apiserver-client-cert-file=c.crt'],
      '--cluster-signing-kube-apiserver-client-cert-file and --cluster-signing-kube-apiserver-client-key-file must be given together',
    ],
    [['--cluster-signing-duration=0s'], 'invalid value "0s" for --cluster-signing-duration: must be greater than 0'],
    [['--leader-elect-renew-deadline=15s'], '--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline'],
    [['--leader-elect-retry-period=10s'], '--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period'],
    [['--leader-elect-retry-period=9s'], '--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period'],
    [['--leader-elect-lease-duration=0'], 'invalid value "0" for --leader-elect-lease-duration: must be greater than 0'],
    [['--leader-elect-retry-period=0s'], 'invalid value "0s" for --leader-elect-retry-period: must be greater than 0'],
    [['--leader-elect=maybe'], 'invalid value "maybe" for --leader-elect: must be true or false'],
    [
      ['--leader-elect-resource-namespace=Kube_System'],
      "invalid value \"Kube_System\" for --leader-elect-resource-namespace: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ],
    [['--identity-lease-duration-seconds=0'], 'invalid value "0" for --identity-lease-duration-seconds: must be a positive number of seconds'],
    [
      ['--identity-lease-duration-seconds=10', '--identity-lease-renew-interval-seconds=10'],
      '--identity-lease-renew-interval-seconds must be less than --identity-lease-duration-seconds',
    ],
    [
      ['--controllers=*,nodes'],
      'invalid value "nodes" for --controllers: unknown controller (*, serviceaccount-token, serviceaccount, root-ca-cert-publisher, tokencleaner, bootstrapsigner, csrsigning, csrapproving, csrcleaner, resourcequota, or -name to disable)',
    ],
    [
      ['--feature-gates', 'A=true'],
      'invalid value "A=true" for --feature-gates: unrecognized feature gate "A" (known: APIResponseCompression, AuthorizeWithSelectors, AuthorizeNodeWithSelectors, StructuredAuthorizationConfiguration, StructuredAuthenticationConfiguration, AllowUnsafeMalformedObjectDeletion, CBORServingAndStorage)',
    ],
    [
      ['--feature-gates', 'AuthorizeWithSelectors=maybe'],
      'invalid value "AuthorizeWithSelectors=maybe" for --feature-gates: invalid value of AuthorizeWithSelectors: maybe, err: must be true or false',
    ],
    [
      ['--enable-admission-plugins=NodeRestriction,Magic'],
      'invalid value "Magic" for --enable-admission-plugins: unknown or unsupported admission plugin (supported: LimitRanger, NodeRestriction, ResourceQuota, ServiceAccount)',
    ],
    [
      ['--enable-admission-plugins=ServiceAccount', '--disable-admission-plugins=ServiceAccount'],
      'ServiceAccount in --enable-admission-plugins and --disable-admission-plugins',
    ],
    [['--authorization-config=/a.yaml', '--authorization-mode=RBAC'], '--authorization-config and --authorization-mode are mutually exclusive'],
    [
      ['--authorization-config=/a.yaml', '--authorization-webhook-version=v1', '--authorization-webhook-cache-authorized-ttl=1m'],
      '--authorization-config and --authorization-webhook-version, --authorization-webhook-cache-authorized-ttl are mutually exclusive',
    ],
    [['--authorization-policy-file=p.jsonl'], '--authorization-policy-file requires ABAC in --authorization-mode'],
    [
      ['--authorization-mode=Node', '--authorization-webhook-config-file=w.yaml'],
      '--authorization-webhook-config-file requires Webhook in --authorization-mode',
    ],
    [['--authorization-webhook-version=v2'], 'invalid value "v2" for --authorization-webhook-version: must be v1 or v1beta1'],
    [
      ['--secure-port=x', '--foo', '--authorization-mode=ABAC', '--tls-cert-file=a'],
      'invalid value "x" for --secure-port: must be an integer between 1 and 65535; unknown flag: --foo; ' +
        '--tls-cert-file and --tls-private-key-file must be given together; --authorization-mode=ABAC requires --authorization-policy-file',
    ],
  ];
  for (const [argv, message] of bad) {
    it(`rejects ${JSON.stringify(argv)}`, () => {
      const e = err(argv);
      assert.equal(e, message);
      assert.doesNotMatch(e, /\n/);
    });
  }
});

describe('usage', () => {
  it('lists every flag with its default', () => {
    const text = usage();
    for (const f of FLAGS) assert.match(text, new RegExp(`--${f.name}\\b`));
    assert.match(text, /--watch-history duration .*\(default 5m0s\)/);
    assert.match(text, /--authorization-mode .*\(default Node,RBAC\)/);
    assert.match(text, /--feature-gates .*\n +APIResponseCompression=true\|false \(BETA - default=true\)/);
    assert.match(text, /StructuredAuthorizationConfiguration=true\|false \(GA - default=true, locked\)/);
    assert.match(text, /--oidc-issuer-url/);
  });

  it('help is recognised separately', () => {
    assert.equal(wantsHelp(['--help']), true);
    assert.equal(wantsHelp(['--secure-port=1']), false);
  });
});

describe('controllerEnabled', () => {
  const on = (argv: string[], name: 'serviceaccount-token' | 'tokencleaner' | 'bootstrapsigner'): boolean => controllerEnabled(ok(argv), name);
  it('runs serviceaccount-token under * and the bootstrap controllers only with bootstrap tokens or by name', () => {
    assert.equal(on([], 'serviceaccount-token'), true);
    assert.equal(on([], 'tokencleaner'), false);
    assert.equal(on(['--enable-bootstrap-token-auth'], 'tokencleaner'), true);
    assert.equal(on(['--enable-bootstrap-token-auth', '--controllers=*,-bootstrapsigner'], 'bootstrapsigner'), false);
    assert.equal(on(['--controllers=*,bootstrapsigner'], 'bootstrapsigner'), true);
    assert.equal(on(['--controllers=tokencleaner'], 'serviceaccount-token'), false);
  });
});
