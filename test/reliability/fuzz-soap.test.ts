/**
 * Fuzz of the SOAP access proxy with real Redis, the local platform over HTTP and the demo echo backend:
 * generated envelopes mixing the shapes that cost a reader most (prefixes on the Envelope times header
 * blocks that each declare one, nested declaring elements, many attributes, long names, deep payloads),
 * credentials and SOAP actions, in both versions. Invariants, per envelope:
 * - the answer is a Fault of the request's version or the backend's answer, never a proxy error;
 * - 200 only for a known key, an envelope within every bound, and an action naming the operation;
 * - an envelope over a bound is refused as envelope_too_complex, naming the setting;
 * - an action naming another operation is refused before the access check, so nothing is counted for it.
 * Then the worst shapes at the body limit: each is answered, with the default bounds and the largest.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOAP_METRIC } from '../../core/soap/proxy';
import { parseSoapSettings, SOAP_LARGEST_BOUNDS, type SoapSettings } from '../../core/soap/settings';
import type { SoapProxyHandler } from '../../lambdas/soap/handler';
import { type SoapEchoServer, startSoapEcho } from '../../local/soap-echo';
import { CONTENT_TYPES, envelope, NS, proxyEvent, SOAP11, SOAP12 } from '../unit/core/soap/fixtures';
import { type CountingMetrics, countingMetrics } from './support/capture';
import { type Harness, startHarness } from './support/harness';
import { reliabilitySeed } from './support/seed';

const ENVELOPES = 300;
const RULE = { method: 'POST', pattern: '/GetQuote$', metric: 'hits', delta: 1 } as const;

let echo: SoapEchoServer;
let harness: Harness;
let metrics: CountingMetrics;
let settings: SoapSettings;
let proxy: SoapProxyHandler;

beforeAll(async () => {
  echo = await startSoapEcho();
  metrics = countingMetrics();
  harness = await startHarness({ apps: 2, metrics, overrides: { mappingRules: [RULE] } });
  settings = parseSoapSettings({ soapNamespace: NS, soapBackendUrl: echo.url });
  proxy = harness.soapProxy(settings);
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await echo?.stop();
});

/** One generated call: its parts, and what the proxy must answer. */
interface Shape {
  readonly version: '1.1' | '1.2';
  readonly knownKey: boolean;
  /** Prefixes declared on the Envelope, and header blocks that each declare one more. */
  readonly prefixes: number;
  readonly declaringBlocks: number;
  /** Levels of nested elements under the operation, each declaring a prefix and carrying an attribute. */
  readonly payloadDepth: number;
  readonly attributes: number;
  readonly nameLength: number;
  readonly action: 'operation' | 'input' | 'other' | 'none';
}

const shapes: fc.Arbitrary<Shape> = fc.record({
  version: fc.constantFrom('1.1' as const, '1.2' as const),
  knownKey: fc.boolean(),
  prefixes: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 240, max: 400 })),
  declaringBlocks: fc.integer({ min: 0, max: 2000 }),
  payloadDepth: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 55, max: 120 })),
  attributes: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 250, max: 300 })),
  nameLength: fc.integer({ min: 1, max: 5000 }),
  action: fc.constantFrom('operation' as const, 'input' as const, 'other' as const, 'none' as const),
});

/** Levels the Envelope, the Body and the operation take. */
const ENVELOPE_LEVELS = 3;

/**
 * Whether the call goes over a bound. The Envelope declares soap, t and the prefixes; the operation
 * declares q beside its attributes; each payload level declares d again.
 */
function overBound(shape: Shape): boolean {
  return (
    shape.prefixes + 2 > settings.soapMaxAttributes ||
    shape.attributes + 1 > settings.soapMaxAttributes ||
    shape.prefixes + 3 + shape.payloadDepth > settings.soapMaxNamespaces ||
    ENVELOPE_LEVELS + shape.payloadDepth > settings.soapMaxDepth
  );
}

function callOf(shape: Shape, key: string) {
  const declarations = Array.from({ length: shape.prefixes }, (_, i) => ` xmlns:p${i}="urn:p${i}"`).join('');
  const blocks = `<q:b xmlns:q="urn:q"/>`.repeat(shape.declaringBlocks);
  const attributes = Array.from({ length: shape.attributes }, (_, i) => ` a${i}="${i}"`).join('');
  const longName = `n${'x'.repeat(shape.nameLength)}`;
  const payload = `${`<d:n xmlns:d="urn:d" a="1">`.repeat(shape.payloadDepth)}${'</d:n>'.repeat(shape.payloadDepth)}`;
  const document = envelope({
    version: shape.version,
    header: `${blocks}<t:ApiKey>${key}</t:ApiKey><t:method>GetQuote</t:method>`,
    body: `<q:GetQuote xmlns:q="urn:example:quotes"${attributes}><${longName}/>${payload}</q:GetQuote>`,
  }).replace(`xmlns:t="${NS}"`, `xmlns:t="${NS}"${declarations}`);
  const action = {
    operation: 'urn:example:GetQuote',
    input: 'http://example.com/Quotes/GetQuoteRequest',
    other: 'urn:example:PlaceOrder',
    none: undefined,
  }[shape.action];
  const contentType =
    shape.version === '1.2' && action !== undefined
      ? `application/soap+xml; charset=utf-8; action="${action}"`
      : CONTENT_TYPES[shape.version].replace(/; action="[^"]*"/, '');
  return proxyEvent(document, {
    'Content-Type': contentType,
    ...(shape.version === '1.1' && action !== undefined && { SOAPAction: `"${action}"` }),
  });
}

describe('SOAP proxy fuzz', () => {
  it(`holds its invariants for ${ENVELOPES} generated envelopes`, { timeout: 300_000 }, async () => {
    const [app] = harness.fixture.active;
    if (!app) throw new Error('fixture too small');
    const failures: string[] = [];
    const samples = fc.sample(shapes, { numRuns: ENVELOPES, seed: reliabilitySeed('SOAP proxy fuzz') });
    for (const shape of samples) {
      const answer = await proxy(callOf(shape, shape.knownKey ? app.userKey : 'no-such-key-fuzz'));
      const over = overBound(shape);
      const namespace = shape.version === '1.1' ? SOAP11 : SOAP12;
      const expected = over
        ? 'envelope_too_complex'
        : shape.action === 'other'
          ? 'action_mismatch'
          : shape.knownKey
            ? 'allowed'
            : 'refused';
      const problem = (() => {
        if (answer.body.includes('proxy_error') || answer.body.includes('The SOAP access proxy failed'))
          return 'a proxy error';
        if (expected === 'allowed') return answer.statusCode === 200 ? undefined : `${answer.statusCode}`;
        if (answer.statusCode === 200) return 'allowed';
        if (!answer.body.includes(namespace)) return 'a Fault of another version';
        if (
          expected === 'envelope_too_complex' &&
          !/Envelope over a structural bound: .*, over soapMax/.test(answer.body)
        )
          return 'no Fault naming the bound';
        if (
          expected === 'action_mismatch' &&
          !answer.body.includes('The SOAP action names another operation')
        )
          return 'no action Fault';
        return undefined;
      })();
      if (problem !== undefined)
        failures.push(`${JSON.stringify(shape)} expected ${expected}, got ${problem}`);
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(metrics.total(SOAP_METRIC.proxyError)).toBe(0);
  });

  it('answers the worst shapes at the body limit, with the default bounds and the largest', {
    timeout: 120_000,
  }, async () => {
    const [app] = harness.fixture.active;
    if (!app) throw new Error('fixture too small');
    const largest = harness.soapProxy({ ...settings, ...SOAP_LARGEST_BOUNDS });
    const room = settings.soapMaxBodyBytes - 2_000;
    const worst: Shape[] = [
      // Prefixes times declaring blocks, the shape that was quadratic.
      { ...neutral, prefixes: 9_990, declaringBlocks: Math.floor((room - 9_990 * 24) / 22) },
      { ...neutral, declaringBlocks: Math.floor(room / 22) },
      { ...neutral, payloadDepth: 990 },
      { ...neutral, attributes: 9_999 },
      { ...neutral, nameLength: room },
    ];
    for (const shape of worst) {
      const event = callOf(shape, app.userKey);
      expect(Buffer.byteLength(event.body ?? '')).toBeLessThanOrEqual(settings.soapMaxBodyBytes);
      const refused = await proxy(event);
      expect([200, 500]).toContain(refused.statusCode);
      expect(refused.body).not.toContain('proxy failed');
      const read = await largest(event);
      expect(read.statusCode, JSON.stringify({ ...shape, body: read.body.slice(0, 300) })).toBe(200);
    }
  });
});

const neutral: Shape = {
  version: '1.1',
  knownKey: true,
  prefixes: 0,
  declaringBlocks: 0,
  payloadDepth: 0,
  attributes: 0,
  nameLength: 1,
  action: 'operation',
};
