// The PATCH media types and which of them a Content-Type names.
import { ownValue } from '../api/own.js';
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_TYPES: readonly string[] = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

const BY_MEDIA_TYPE: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

/** The patch media types served: apply-patch+cbor too under the CBORServingAndStorage gate. */
export function patchTypes(cbor: boolean): readonly string[] {
  return cbor ? [...PATCH_TYPES, 'application/apply-patch+cbor'] : PATCH_TYPES;
}

/** Whether a Content-Type is server-side apply in CBOR (served only under the CBORServingAndStorage gate). */
export function isCborApply(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]!.trim().toLowerCase() === 'application/apply-patch+cbor';
}

/** The patch type of a Content-Type; undefined = not a patch type. */
export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  if (!contentType) return undefined;
  return ownValue(BY_MEDIA_TYPE, contentType.split(';', 1)[0]!.trim().toLowerCase()) as PatchType | undefined;
}
