// The shared CEL environment module: declare variables per use, compile
// once, evaluate many times under a cost bound. See README.md.
import { CelScalar, mapType } from '@bufbuild/cel';
import { CelEnvironment } from './environment.js';

export { CelEnvironment, CompiledExpression, type EnvironmentOptions } from './environment.js';
export { CelCompileError, CelEvalError, type CelErrorCode } from './errors.js';
export { none, isNone } from './optional.js';
export { constantPatternError } from './regex.js';
export { DEFAULT_LIMITS, type CostLimits } from './meter.js';
export { durationValue, fromJson, kindOf, stringList, timestampValue, type Json } from './values.js';
export { CelScalar, listType, mapType, isCelList, isCelMap, type CelType, type CelValue, type CelInput } from '@bufbuild/cel';

/** `claims`: the JWT payload, a map of claim name to any JSON value (authentication configuration). */
export const claimsEnvironment = new CelEnvironment('claims', { claims: mapType(CelScalar.STRING, CelScalar.DYN) });

/** `user`: the mapped UserInfo (username, uid, groups, extra) (authentication configuration). */
export const userEnvironment = new CelEnvironment('user', { user: mapType(CelScalar.STRING, CelScalar.DYN) });
