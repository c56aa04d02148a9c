// The --tracing-config-file format alone: kube's TracingConfiguration in its
// three apiVersions, the defaults, how an endpoint becomes the OTLP/HTTP URL,
// and every refusal naming its field.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../lib/config/error.js';
import { DEFAULT_ENDPOINT, exportUrl, parseTracingConfiguration } from '../../gateway/tracing/config.js';

const head = (v = 'v1') => `apiVersion: apiserver.config.k8s.io/${v}\nkind: TracingConfiguration\n`;

describe('TracingConfiguration', () => {
  it('reads v1, v1beta1 and v1alpha1, YAML or JSON', () => {
    for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
      assert.deepEqual(
        { ...parseTracingConfiguration(`${head(v)}endpoint: collector:4318\nsamplingRatePerMillion: 250\n`, 'f') },
        { endpoint: 'collector:4318', url: 'http://collector:4318/v1/traces', samplingRatePerMillion: 250 },
      );
    }
    const json = JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'TracingConfiguration',
      endpoint: 'https://otel.example:443/',
      samplingRatePerMillion: 1_000_000,
    });
    assert.deepEqual(
      { ...parseTracingConfiguration(json, 'f') },
      { endpoint: 'https://otel.example:443/', url: 'https://otel.example/v1/traces', samplingRatePerMillion: 1_000_000 },
    );
  });

  it('defaults: the OTLP/HTTP port on localhost, and no root request sampled', () => {
    const c = parseTracingConfiguration(head(), 'f');
    assert.equal(c.endpoint, DEFAULT_ENDPOINT);
    assert.equal(c.url, 'http://localhost:4318/v1/traces');
    assert.equal(c.samplingRatePerMillion, 0);
    assert.equal(parseTracingConfiguration(`${head()}endpoint: null\nsamplingRatePerMillion: null\n`, 'f').samplingRatePerMillion, 0);
    assert.ok(Object.isFrozen(c));
  });

  it('reads an endpoint as host:port, or as an http(s) URL whose path is kept', () => {
    assert.equal(exportUrl('127.0.0.1:4318'), 'http://127.0.0.1:4318/v1/traces');
    assert.equal(exportUrl('[::1]:4318'), 'http://[::1]:4318/v1/traces');
    assert.equal(exportUrl('http://collector/custom/path'), 'http://collector/custom/path');
    assert.equal(exportUrl('https://collector:8443'), 'https://collector:8443/v1/traces');
    assert.deepEqual(exportUrl('dns://collector:4317'), { error: 'scheme dns is not supported: spans are sent by OTLP over HTTP (http or https)' });
    assert.deepEqual(exportUrl('http://user:pw@collector'), { error: 'must not contain credentials' });
  });

  const bad: Array<[string, string, RegExp]> = [
    ['unknown field', `${head()}endpoint: a:1\nsampling: 3\n`, /^src: sampling: unknown field$/],
    [
      'wrong apiVersion',
      'apiVersion: apiserver.config.k8s.io/v2\nkind: TracingConfiguration\n',
      /apiVersion: Unsupported value: "apiserver.config.k8s.io\/v2"/,
    ],
    ['wrong kind', 'apiVersion: apiserver.config.k8s.io/v1\nkind: EgressSelectorConfiguration\n', /kind: Unsupported value: "EgressSelectorConfiguration"/],
    ['negative rate', `${head()}samplingRatePerMillion: -1\n`, /samplingRatePerMillion: Invalid value: -1: sampling rate must be positive/],
    [
      'rate over a million',
      `${head()}samplingRatePerMillion: 1000001\n`,
      /samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million/,
    ],
    ['fractional rate', `${head()}samplingRatePerMillion: 0.5\n`, /samplingRatePerMillion: Invalid value: 0.5: must be an integer/],
    ['rate as a string', `${head()}samplingRatePerMillion: "10"\n`, /samplingRatePerMillion: Invalid value: "10": must be an integer/],
    ['endpoint not a string', `${head()}endpoint: 4318\n`, /endpoint: Invalid value: 4318: must be a string/],
    ['gRPC-only scheme', `${head()}endpoint: unix:///run/otel.sock\n`, /endpoint: Invalid value: "unix:\/\/\/run\/otel.sock": scheme unix is not supported/],
    [
      'credentials in the endpoint, never quoted back',
      `${head()}endpoint: http://user:s3cret@collector:4318\n`,
      /^src: endpoint: Invalid value: "http:\/\/<redacted>@collector:4318": must not contain credentials$/,
    ],
    ['not YAML', 'endpoint: [\n', /^src: not valid YAML or JSON/],
    ['not an object', '- a\n', /^src: must be a TracingConfiguration object$/],
    ['a prototype key is a field like any other', `${head()}__proto__: {samplingRatePerMillion: 5}\n`, /__proto__: unknown field/],
  ];
  for (const [what, text, want] of bad) {
    it(`refuses ${what}, naming the field`, () => {
      assert.throws(
        () => parseTracingConfiguration(text, 'src'),
        (err: Error) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, want);
          return true;
        },
      );
    });
  }

  it('reports every problem of a file in one message', () => {
    assert.throws(
      () => parseTracingConfiguration('kind: X\nfoo: 1\nsamplingRatePerMillion: -2\n', 'src'),
      (err: Error) => {
        assert.match(
          err.message,
          /^src: foo: unknown field; apiVersion: Unsupported value: ""[^;]*; kind: Unsupported value: "X"[^;]*; samplingRatePerMillion: Invalid value: -2/,
        );
        return true;
      },
    );
  });
});
