// admissionregistration.k8s.io/v1: the admission webhook configurations
// (MutatingWebhookConfiguration, ValidatingWebhookConfiguration), which the
// core backend's webhook plugins read from a watch-fed cache
// (backends/core/admission/webhooks). Cluster-scoped, no status.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { list } from '../fields.js';
import { defaultWebhooks, validateWebhookConfiguration } from './webhook-validation.js';

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';

const webhooksColumn = column('Webhooks', 'Webhooks indicates the number of webhooks in the configuration', (o: KObject) => list(o, 'webhooks').length, {
  type: 'integer',
});

function webhookConfiguration(kind: string, plural: string, mutating: boolean): ResourceType {
  return {
    group: ADMISSION_GROUP,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular: plural.slice(0, -1),
    namespaced: false,
    shortNames: [],
    categories: ['api-extensions'],
    verbs: ALL_VERBS,
    subresources: [],
    nameRule: 'subdomain',
    createOnUpdate: false,
    generation: 'spec',
    columns: [nameColumn(), webhooksColumn, ageColumn()],
    fieldSelectors: {},
    defaults: defaultWebhooks(mutating),
    validate: validateWebhookConfiguration(mutating),
  };
}

export const mutatingwebhookconfigurations = webhookConfiguration('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', true);
export const validatingwebhookconfigurations = webhookConfiguration('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false);

export const ADMISSIONREGISTRATION_TYPES: readonly ResourceType[] = [mutatingwebhookconfigurations, validatingwebhookconfigurations];
