// Rich objects in the exact JSON form kube-apiserver stores (Go field order is
// not asserted; Go renders non-pointer structs such as `status: {}` and
// `resources: {}` even when empty, so they appear here too).
const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: '6f1c9a2e-0000-4000-8000-000000000001',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2024-01-02T03:04:05Z',
  labels: { app: 'x', tier: 'web' },
  annotations: { note: 'hello', empty: '' },
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs1', uid: 'u-1', controller: true, blockOwnerDeletion: false }],
  finalizers: ['example.com/keep'],
  managedFields: [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2024-01-02T03:04:05Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    },
  ],
});

export const pod = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: meta('p1', 'default'),
  spec: {
    volumes: [
      { name: 'cfg', configMap: { name: 'c1', items: [{ key: 'a', path: 'a.txt', mode: 0o644 }], defaultMode: 420, optional: false } },
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      { name: 'sec', secret: { secretName: 's1' } },
      { name: 'proj', projected: { sources: [{ serviceAccountToken: { audience: 'api', expirationSeconds: 3600, path: 'token' } }] } },
      { name: 'claim', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
    ],
    containers: [
      {
        name: 'app',
        image: 'nginx:1.27',
        command: ['nginx'],
        args: ['-g', 'daemon off;'],
        ports: [
          { name: 'http', containerPort: 80, protocol: 'TCP' },
          { containerPort: 9090, protocol: 'UDP' },
        ],
        env: [
          { name: 'A', value: 'B' },
          { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's1', key: 'k', optional: true } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
          { name: 'MEM', valueFrom: { resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } } },
        ],
        resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
        volumeMounts: [{ name: 'cfg', readOnly: true, mountPath: '/etc/cfg' }],
        livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10 },
        readinessProbe: { tcpSocket: { port: 80 }, timeoutSeconds: 1 },
        startupProbe: { exec: { command: ['true'] }, failureThreshold: 30 },
        lifecycle: { preStop: { sleep: { seconds: 5 } } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
        securityContext: {
          capabilities: { drop: ['ALL'] },
          runAsNonRoot: true,
          runAsUser: 0,
          allowPrivilegeEscalation: false,
          seccompProfile: { type: 'RuntimeDefault' },
        },
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 0,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    serviceAccountName: 'default',
    securityContext: { fsGroup: 2000 },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
        },
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'x' } }, topologyKey: 'kubernetes.io/hostname' } },
        ],
      },
    },
    schedulerName: 'default-scheduler',
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    priority: 0,
    enableServiceLinks: true,
  },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2024-01-02T03:04:06Z' }],
    podIP: '10.0.0.5',
    startTime: '2024-01-02T03:04:05Z',
    containerStatuses: [
      {
        name: 'app',
        state: { running: { startedAt: '2024-01-02T03:04:06Z' } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: 'nginx:1.27',
        imageID: '',
        started: true,
      },
    ],
    qosClass: 'Burstable',
  },
};

export const service = {
  kind: 'Service',
  apiVersion: 'v1',
  metadata: meta('svc1', 'default'),
  spec: {
    ports: [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
      { name: 'named', protocol: 'TCP', port: 443, targetPort: 'https', nodePort: 30443 },
    ],
    selector: { app: 'x' },
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10'],
    type: 'NodePort',
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
  },
  status: { loadBalancer: {} },
};

export const secret = {
  kind: 'Secret',
  apiVersion: 'v1',
  metadata: meta('s1', 'default'),
  immutable: false,
  data: { k: Buffer.from('v').toString('base64'), bin: Buffer.from([0, 1, 254, 255]).toString('base64'), empty: '' },
  type: 'Opaque',
};

export const configMap = {
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'c1', namespace: 'default' },
  data: { a: 'b', n: '1' },
  binaryData: { raw: Buffer.from('\x00\x01').toString('base64') },
};

export const coreEvent = {
  kind: 'Event',
  apiVersion: 'v1',
  metadata: { name: 'p1.17a', namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u-1', apiVersion: 'v1', resourceVersion: '7' },
  reason: 'Scheduled',
  message: 'Successfully assigned default/p1',
  source: { component: 'scheduler' },
  firstTimestamp: '2024-01-02T03:04:05Z',
  lastTimestamp: '2024-01-02T03:04:05Z',
  count: 1,
  type: 'Normal',
  eventTime: '2024-01-02T03:04:05.123456Z',
  reportingComponent: 'default-scheduler',
  reportingInstance: 'node-1',
};

export const eventsEvent = {
  kind: 'Event',
  apiVersion: 'events.k8s.io/v1',
  metadata: { name: 'e1', namespace: 'default', creationTimestamp: '2024-01-02T03:04:05Z' },
  eventTime: '2024-01-02T03:04:05.000001Z',
  series: { count: 2, lastObservedTime: '2024-01-02T03:05:05.999999Z' },
  reportingController: 'example.com/ctrl',
  reportingInstance: 'ctrl-1',
  action: 'Binding',
  reason: 'Scheduled',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p1' },
  note: 'assigned',
  type: 'Normal',
  deprecatedSource: {}, // Go struct values are always rendered
  deprecatedFirstTimestamp: '2024-01-02T03:04:05Z',
  deprecatedLastTimestamp: null, // a zero metav1.Time renders as null
};

export const lease = {
  kind: 'Lease',
  apiVersion: 'coordination.k8s.io/v1',
  metadata: { name: 'kube-scheduler', namespace: 'kube-system' },
  spec: {
    holderIdentity: 'node-1_abc',
    leaseDurationSeconds: 15,
    acquireTime: '2024-01-02T03:04:05.000000Z',
    renewTime: '2024-01-02T03:04:20.654321Z',
    leaseTransitions: 0,
  },
};
