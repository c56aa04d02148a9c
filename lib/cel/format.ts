// The Kubernetes format library (k8s.io/apiserver/pkg/cel/library/format.go):
// `format.named(name)` (an optional format), `format.<name>()`, and
// `<format>.validate(string)`, an optional list of kube's validation messages
// (none when the string is valid). The checks are the ones kube-apiserver
// itself uses, so they are reused: apimachinery's name validators
// (lib/registry/names.ts) and kube-openapi's strfmt checks (lib/crdschema/formats.ts).
// A format is a one-entry map under a marker key holding its name (see
// quantity.ts for why), so `==` compares formats by name.
import { celFunc, celList, celMap, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, maskTrailingDash } from '../registry/names.js';
import { formatCheck } from '../crdschema/formats.js';
import { none } from './optional.js';
import { parseRequestUriError } from './requesturi.js';
import { marked, markerKey } from './marker.js';

const FORMAT_KEY = markerKey('k8s.format');
const { DYN, STRING } = CelScalar;

interface Format {
  readonly validate: (s: string) => readonly string[];
  /** kube's stand-in for the regex the check costs as (Format.MaxRegexSize): the runtime cost is a `matches` of that size. */
  readonly maxRegexSize: number;
}

/** kube-openapi's strfmt check of `name`, with kube's one message when it fails. */
function strfmt(name: string, message: string): (s: string) => readonly string[] {
  const check = formatCheck(name);
  if (!check) throw new Error(`no strfmt check for ${name}`);
  return (s) => (check(s) ? [] : [message]);
}

// The regex sizes are kube's: its DNS patterns' bounds, and for the strfmt
// formats the length of the pattern it names (govalidator's URL and Base64,
// strfmt's UUID and date-time patterns: 1120, 84, 70 and 71 characters).
const FORMATS: ReadonlyMap<string, Format> = new Map<string, Format>([
  ['dns1123Label', { validate: isDNS1123Label, maxRegexSize: 30 }],
  ['dns1123Subdomain', { validate: isDNS1123Subdomain, maxRegexSize: 60 }],
  ['dns1035Label', { validate: isDNS1035Label, maxRegexSize: 30 }],
  ['qualifiedName', { validate: isQualifiedName, maxRegexSize: 60 }],
  ['dns1123LabelPrefix', { validate: (s) => isDNS1123Label(maskTrailingDash(s)), maxRegexSize: 30 }],
  ['dns1123SubdomainPrefix', { validate: (s) => isDNS1123Subdomain(maskTrailingDash(s)), maxRegexSize: 60 }],
  ['dns1035LabelPrefix', { validate: (s) => isDNS1035Label(maskTrailingDash(s)), maxRegexSize: 30 }],
  ['labelValue', { validate: isValidLabelValue, maxRegexSize: 40 }],
  [
    'uri',
    {
      validate: (s) => {
        const e = parseRequestUriError(s);
        return e === undefined ? [] : [e];
      },
      maxRegexSize: 1120,
    },
  ],
  ['uuid', { validate: strfmt('uuid', 'does not match the UUID format'), maxRegexSize: 70 }],
  ['byte', { validate: strfmt('byte', 'invalid base64'), maxRegexSize: 84 }],
  ['date', { validate: strfmt('date', 'invalid date'), maxRegexSize: 71 }],
  ['datetime', { validate: strfmt('datetime', 'invalid datetime'), maxRegexSize: 71 }],
]);

/** The names `format.named()` knows, in kube's order. */
export const FORMAT_NAMES: readonly string[] = [...FORMATS.keys()];

const formatValue = (name: string) => celMap(new Map([[FORMAT_KEY, name]]));

function formatOf(v: CelValue): Format | undefined {
  const name = marked(v, FORMAT_KEY);
  return name === undefined ? undefined : FORMATS.get(name);
}

/** The regex size a `validate` on this receiver is charged as (meter.ts); undefined when it is not a format. */
export function formatRegexSize(v: CelValue | undefined): number | undefined {
  return v === undefined ? undefined : formatOf(v)?.maxRegexSize;
}

export const formatFunctions: readonly CelFunc[] = [
  celFunc('format.named', [STRING], DYN, (name: string) => (FORMATS.has(name) ? formatValue(name) : celMap(none()))),
  ...FORMAT_NAMES.map((name) => celFunc(`format.${name}`, [], DYN, () => formatValue(name))),
  celMethod('validate', DYN, [STRING], DYN, function (this: CelValue, s: string) {
    const f = formatOf(this);
    if (!f) throw new Error('no such overload: validate applies to a format');
    const errs = f.validate(s);
    return errs.length === 0 ? celMap(none()) : celList([...errs]);
  }),
];
