// apiextensions.k8s.io/v1: CustomResourceDefinitions, users' own types. The
// type itself is served like any built-in; what a CRD adds to the registry
// is built by lib/crd and swapped in by the core backend (DESIGN.md section 6).
import { ALL_VERBS, type ResourceType } from '../types.js';
import { defaultCrd, validateCrd } from './crd-validation.js';
import { pruneCrdSchemas } from './crd-schemaprune.js';
import { crdDecodeError } from './crd-godecode.js';
import { precheckCrd } from './crd-offloop.js';

export const customresourcedefinitions: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'CustomResourceDefinition', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'crd',
  createOnUpdate: false,
  // kube's CRD strategy: generation bumps when the spec changes.
  generation: 'spec',
  fieldSelectors: {},
  // Decoding fails on a wrong type inside the schema unions (crd-godecode.ts) and drops what JSONSchemaProps
  // does not know, at every depth (crd-schemaprune.ts), before kube's defaulting.
  defaults: (crd) => {
    const undecodable = crdDecodeError(crd);
    if (undecodable) throw undecodable;
    pruneCrdSchemas(crd);
    defaultCrd(crd);
  },
  validate: validateCrd,
  prevalidate: precheckCrd,
};

export const APIEXTENSIONS_TYPES: readonly ResourceType[] = [customresourcedefinitions];
