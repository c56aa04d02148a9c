// Admission of the creates kube answers without storing anything (its REST
// creaters: TokenReview, the access reviews, SelfSubjectReview), which the
// gateway answers itself. kube's create handler runs mutating admission on
// the decoded object, the type's registry validates it and calls
// createValidation (the validating phase), then computes the answer; dryRun
// is validated and passed on as for any create. Validating plugins only
// read, so the object is not copied.
import type { BackendRequest, CreateAdmission } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { internalError } from '../../../lib/api/status.js';
import type { CoreEnv } from '../env.js';
import { parseDryRun } from '../handlers/params.js';
import { admissionAttributes } from './attributes.js';
import { mutate, validate } from './run.js';
import type { AdmissionAttributes } from './types.js';

function attributesOf(env: CoreEnv, r: BackendRequest, object: KObject): AdmissionAttributes {
  const { apiGroup, apiVersion, resource } = r.info;
  const t = env.registry.lookup(apiGroup, apiVersion, resource);
  if (!t) throw internalError(`no registered type for ${resource}.${apiGroup}/${apiVersion}`);
  return admissionAttributes(t, r, { operation: 'CREATE', object, oldObject: undefined, dryRun: parseDryRun(r.query, 'CreateOptions') });
}

/** `envOf`: the request's view of the backend (a recorded request's spans). */
export function createAdmission(envOf: (r: BackendRequest) => CoreEnv): CreateAdmission {
  return {
    async mutate(r, object) {
      const env = envOf(r);
      return (await mutate(env, attributesOf(env, r, object))) ?? object;
    },
    async validate(r, object) {
      const env = envOf(r);
      await validate(env, attributesOf(env, r, object));
    },
  };
}
