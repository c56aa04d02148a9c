// Content negotiation: which representation a client asked for in Accept,
// and how to read a request body from its Content-Type. Results for a given
// header value are cached, because clients send the same few values.
import { notAcceptable, unsupportedMediaType, StatusError } from '../api/status.js';
import { setOwn } from '../api/own.js';
import { PROTOBUF_MEDIA_TYPE } from '../protobuf/codec.js';
import { CBOR_MEDIA_TYPE, CBOR_SEQ_MEDIA_TYPE } from '../cbor/errors.js';

export type OutputAs = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'APIGroupDiscoveryList';

export interface Output {
  readonly format: 'json' | 'yaml' | 'protobuf' | 'cbor';
  /** Transformed representation requested with `;as=…` (absent = the object itself). */
  readonly as?: OutputAs;
  /** API version of the transformed representation (`v1`, `v1beta1`, `v2`). */
  readonly asVersion?: string;
  /** Content-Type to answer with. */
  readonly contentType: string;
}

export const JSON_OUTPUT: Output = Object.freeze({ format: 'json', contentType: 'application/json' });
export const YAML_OUTPUT: Output = Object.freeze({ format: 'yaml', contentType: 'application/yaml' });
export const PROTOBUF_OUTPUT: Output = Object.freeze({ format: 'protobuf', contentType: PROTOBUF_MEDIA_TYPE });
export const CBOR_OUTPUT: Output = Object.freeze({ format: 'cbor', contentType: CBOR_MEDIA_TYPE });

/**
 * What a caller can serve besides JSON and YAML. `protobuf`: the object has a
 * protobuf form (a built-in type). `cbor`: the CBORServingAndStorage gate is
 * on (every type has a CBOR form: CBOR holds whatever JSON holds).
 */
export interface Encodings {
  readonly protobuf?: boolean;
  readonly cbor?: boolean;
}

export const SUPPORTED_OUTPUT = ['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io'];

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [rawType, ...rawParams] = part.split(';');
    const type = rawType!.trim().toLowerCase();
    if (!type) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '');
      if (k === 'q') q = Number(v);
      else setOwn(params, k, v);
    }
    if (!Number.isNaN(q) && q > 0) ranges.push({ type, params, q });
  }
  // Stable sort: higher q first, header order otherwise.
  return ranges
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || a.i - b.i)
    .map((x) => x.r);
}

function outputFor(range: MediaRange, allowAs: ReadonlySet<OutputAs>, enc: Encodings): Output | undefined {
  const { type, params } = range;
  if (type === PROTOBUF_MEDIA_TYPE) return protobufOutput(params, allowAs, enc.protobuf === true);
  // cbor-seq is the stream form of the same serializer (a watch answers in it whichever of the two was asked for).
  if (type === CBOR_MEDIA_TYPE || type === CBOR_SEQ_MEDIA_TYPE) return enc.cbor ? cborOutput(params, allowAs) : undefined;
  const isJson = type === 'application/json' || type === '*/*' || type === 'application/*';
  const isYaml = type === 'application/yaml';
  if (!isJson && !isYaml) return undefined;
  const as = params['as'];
  if (as === undefined) {
    // `stream=watch` and `pretty` are accepted and ignored.
    return isYaml ? YAML_OUTPUT : JSON_OUTPUT;
  }
  if (!isJson || !allowAs.has(as as OutputAs)) return undefined;
  const g = params['g'];
  const v = params['v'];
  if (as === 'APIGroupDiscoveryList') {
    if (g !== 'apidiscovery.k8s.io' || (v !== 'v2' && v !== 'v2beta1')) return undefined;
    return Object.freeze({ format: 'json', as, asVersion: v, contentType: `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList` });
  }
  if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  return Object.freeze({ format: 'json', as: as as OutputAs, asVersion: v, contentType: `application/json;as=${as};g=meta.k8s.io;v=${v}` });
}

/**
 * kube-apiserver's rule (AllowsMediaTypeTransform): the object itself in
 * protobuf when its type has a protobuf schema; PartialObjectMetadata(List)
 * for any type; Table only as JSON or YAML (meta/v1 Table has no protobuf form).
 */
function protobufOutput(params: Record<string, string>, allowAs: ReadonlySet<OutputAs>, protobuf: boolean): Output | undefined {
  const as = params['as'];
  if (as === undefined) return protobuf ? PROTOBUF_OUTPUT : undefined;
  // Aggregated discovery v2 has a protobuf form (apidiscovery/v2); v2beta1's is not served here.
  if (as === 'APIGroupDiscoveryList') {
    if (!allowAs.has(as) || params['g'] !== 'apidiscovery.k8s.io' || params['v'] !== 'v2') return undefined;
    return Object.freeze({
      format: 'protobuf',
      as,
      asVersion: 'v2',
      contentType: `${PROTOBUF_MEDIA_TYPE};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`,
    });
  }
  if (as !== 'PartialObjectMetadata' && as !== 'PartialObjectMetadataList') return undefined;
  if (!allowAs.has(as) || params['g'] !== 'meta.k8s.io' || params['v'] !== 'v1') return undefined;
  return Object.freeze({ format: 'protobuf', as, asVersion: 'v1', contentType: `${PROTOBUF_MEDIA_TYPE};as=${as};g=meta.k8s.io;v=v1` });
}

/**
 * CBOR as kube-apiserver serves it behind CBORServingAndStorage: the object
 * itself, PartialObjectMetadata(List), or aggregated discovery; a Table only as JSON or YAML (as
 * for protobuf), so `application/cbor;as=Table` falls through to the next
 * type in Accept.
 */
function cborOutput(params: Record<string, string>, allowAs: ReadonlySet<OutputAs>): Output | undefined {
  const as = params['as'];
  if (as === undefined) return CBOR_OUTPUT;
  if (as === 'APIGroupDiscoveryList') {
    const v = params['v'];
    if (!allowAs.has(as) || params['g'] !== 'apidiscovery.k8s.io' || (v !== 'v2' && v !== 'v2beta1')) return undefined;
    return Object.freeze({ format: 'cbor', as, asVersion: v, contentType: `${CBOR_MEDIA_TYPE};g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList` });
  }
  if (as !== 'PartialObjectMetadata' && as !== 'PartialObjectMetadataList') return undefined;
  if (!allowAs.has(as) || params['g'] !== 'meta.k8s.io' || params['v'] !== 'v1') return undefined;
  return Object.freeze({ format: 'cbor', as, asVersion: 'v1', contentType: `${CBOR_MEDIA_TYPE};as=${as};g=meta.k8s.io;v=v1` });
}

/**
 * Answers by Accept value, then by variant (`variantOf`): the request's own header string is the
 * key, so no key string is joined per request (kubectl's Accept runs to ~100 characters).
 */
const cache = new Map<string, (Output | StatusError | undefined)[]>();
const CACHE_LIMIT = 512;

/** The slot of an answer: what is served beside the media types (allowAs, protobuf, cbor). */
function variantOf(allowAs: ReadonlySet<OutputAs>, enc: Encodings): number {
  return (allowAs === RESOURCE_AS ? 0 : 4) + (enc.protobuf ? 2 : 0) + (enc.cbor ? 1 : 0);
}

export const RESOURCE_AS: ReadonlySet<OutputAs> = new Set(['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
export const DISCOVERY_AS: ReadonlySet<OutputAs> = new Set(['APIGroupDiscoveryList']);

/**
 * The representation to answer with; throws 406 when nothing in Accept is
 * served. `enc.protobuf`: the object has a protobuf form (a built-in type),
 * so `application/vnd.kubernetes.protobuf` is served; else the next type in
 * Accept is (client-go lists `application/json` after it for that reason).
 * `enc.cbor`: the CBORServingAndStorage gate is on, so `application/cbor` is
 * served; off, it is skipped the same way.
 */
export function negotiateOutput(accept: string | undefined, allowAs: ReadonlySet<OutputAs> = RESOURCE_AS, enc: Encodings = {}): Output {
  if (!accept) return JSON_OUTPUT;
  let answers = cache.get(accept);
  if (answers === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(accept, (answers = []));
  }
  const variant = variantOf(allowAs, enc);
  let hit = answers[variant];
  if (hit === undefined) {
    hit = notAcceptable([...SUPPORTED_OUTPUT, ...(enc.protobuf ? [PROTOBUF_MEDIA_TYPE] : []), ...(enc.cbor ? [CBOR_MEDIA_TYPE] : [])]);
    for (const range of parseAccept(accept)) {
      const out = outputFor(range, allowAs, enc);
      if (out) {
        hit = out;
        break;
      }
    }
    answers[variant] = hit;
  }
  if (hit instanceof StatusError) throw hit;
  return hit;
}

export type InputFormat = 'json' | 'yaml' | 'protobuf' | 'cbor';

export const SUPPORTED_INPUT = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

/**
 * The body format of a create/update; an absent Content-Type means JSON, as
 * kube-apiserver takes it. `cbor`: the CBORServingAndStorage gate is on;
 * off, an `application/cbor` body is a 415 like any unknown type.
 */
export function negotiateInput(contentType: string | undefined, cbor = false): InputFormat {
  if (!contentType) return 'json';
  // What clients send (kubectl, client-go's JSON): no split's array, trim and lower-case copy (~1.5k instructions a create).
  if (contentType === 'application/json') return 'json';
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === '') return 'json';
  if (type === 'application/yaml') return 'yaml';
  if (type === PROTOBUF_MEDIA_TYPE) return 'protobuf';
  if (type === CBOR_MEDIA_TYPE && cbor) return 'cbor';
  throw unsupportedMediaType(contentType, cbor ? [...SUPPORTED_INPUT, CBOR_MEDIA_TYPE] : SUPPORTED_INPUT);
}
