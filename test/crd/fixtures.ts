// CustomResourceDefinitions the CRD tests install: a namespaced one with
// status and scale subresources, printer columns and a selectable field, and
// a cluster-scoped one; both built from a few parameters so tests can vary them.
import type { TestServer } from '../helpers/server.js';
import { until } from '../gc/helpers.js';

export const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface CrdParams {
  group?: string;
  plural?: string;
  kind?: string;
  scope?: 'Namespaced' | 'Cluster';
  shortNames?: string[];
  categories?: string[];
}

/** A CronTab-like CRD (the kube documentation's example) with everything a served type can declare. */
export function crontabCrd(p: CrdParams = {}): Record<string, unknown> {
  const group = p.group ?? 'stable.example.com';
  const plural = p.plural ?? 'crontabs';
  const kind = p.kind ?? 'CronTab';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: p.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: p.shortNames ?? ['ct'], ...(p.categories ? { categories: p.categories } : {}) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { cronSpec: { type: 'string' }, image: { type: 'string' }, replicas: { type: 'integer' } } },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' } } },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
          },
          additionalPrinterColumns: [
            { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          selectableFields: [{ jsonPath: '.spec.image' }],
        },
      ],
    },
  };
}

export function crontab(name: string, spec: Record<string, unknown>, group = 'stable.example.com', kind = 'CronTab'): Record<string, unknown> {
  return { apiVersion: `${group}/v1`, kind, metadata: { name }, spec };
}

/** Waits until the CRD is Established and `path` (one of its collections) answers 200. */
export async function waitEstablished(s: Pick<TestServer, 'admin'>, name: string, path: string): Promise<Record<string, any>> {
  return until(`${name} established and served`, async () => {
    const r = await s.admin.request('GET', `${CRD_PATH}/${name}`);
    const est = (r.json as Record<string, any>)?.status?.conditions?.find((c: Record<string, any>) => c.type === 'Established');
    if (est?.status !== 'True') return undefined;
    const served = await s.admin.request('GET', path);
    return served.status === 200 ? (r.json as Record<string, any>) : undefined;
  });
}
