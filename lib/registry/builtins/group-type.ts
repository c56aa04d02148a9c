// The fields most built-in kinds of a named group share; each group's file
// states only what differs (short names, subresources, strategy hooks).
import { ALL_VERBS, type ResourceType, type Subresource, type Verb } from '../types.js';

export const SUBRESOURCE_VERBS: readonly Verb[] = ['get', 'patch', 'update'];

/** The status subresource of a kind. */
export const statusOf = (kind: string): Subresource => ({ name: 'status', kind, verbs: SUBRESOURCE_VERBS });

export function builtinType(
  group: string,
  kind: string,
  plural: string,
  rest: Partial<ResourceType> & Pick<ResourceType, 'namespaced'>,
  version = 'v1',
): ResourceType {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
    nameRule: 'subdomain',
    createOnUpdate: false,
    fieldSelectors: {},
    ...rest,
  };
}
