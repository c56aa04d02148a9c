// Helpers for the RBAC and access-review tests: kubeconfigs for users with
// client certificates signed by the test server's dev CA, kubectl bound to
// them, and clients.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { devPkiPaths } from '../../certs/devpki.js';
import { generateClientCert } from '../../certs/pki.js';
import { renderKubeconfig } from '../../certs/kubeconfig.js';
import { HttpsClient } from '../helpers/client.js';
import type { TestServer } from '../helpers/server.js';
import { findKubectl, Kubectl } from '../e2e/helpers.js';

export const KUBECTL = findKubectl();

export interface Identity {
  readonly kubeconfig: string;
  readonly client: HttpsClient;
  kubectl(): Kubectl;
}

/** A client certificate for `user` in `groups`, as a kubeconfig file and an HTTPS client. */
export async function identity(s: TestServer, user: string, groups: string[] = []): Promise<Identity> {
  const pki = devPkiPaths(s.dataDir);
  const [caCert, caKey] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.caKey, 'utf8')]);
  const leaf = generateClientCert({ certPem: caCert, keyPem: caKey }, { user, groups });
  const kubeconfig = join(s.dataDir, `${user.replace(/[^a-z0-9]/gi, '_')}-${groups.join('_').replace(/[^a-z0-9]/gi, '_')}.kubeconfig`);
  await writeFile(kubeconfig, renderKubeconfig({ server: s.url, caPem: caCert, clientCertPem: leaf.certPem, clientKeyPem: leaf.keyPem, userName: user }), {
    mode: 0o600,
  });
  const client = new HttpsClient(s.url, { ca: caCert, cert: leaf.certPem, key: leaf.keyPem });
  return { kubeconfig, client, kubectl: () => new Kubectl(KUBECTL!, kubeconfig) };
}

export const RBAC = '/apis/rbac.authorization.k8s.io/v1';

export function roleBinding(ns: string, name: string, roleKind: 'Role' | 'ClusterRole', role: string, subjects: object[]): object {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: role },
    subjects,
  };
}

export function clusterRoleBinding(name: string, role: string, subjects: object[]): object {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects,
  };
}

export const userSubject = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
export const groupSubject = (name: string) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });
export const saSubject = (namespace: string, name: string) => ({ kind: 'ServiceAccount', name, namespace });

/** A SelfSubjectAccessReview answer for the client (true = allowed). */
export async function canI(c: HttpsClient, resourceAttributes: object): Promise<boolean> {
  const r = await c.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes },
  });
  if (r.status !== 201) throw new Error(`SelfSubjectAccessReview: ${r.status} ${r.text}`);
  return r.json.status.allowed === true;
}
