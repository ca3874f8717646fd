import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AccessDecision } from '../../../core/decision/decision';
import type { SoapCredentialMode } from '../../../core/soap/access-header';
import type { ForwardPort } from '../../../core/soap/forward';
import {
  type DecideAccess,
  SOAP_METRIC,
  type SoapAccessDecision,
  type SoapAccessRequest,
} from '../../../core/soap/proxy';
import type { SoapSettings } from '../../../core/soap/settings';
import { createSoapProxyHandler, headerValue } from '../../../lambdas/soap/handler';
import { freePort } from '../../../local/redis';
import { type SoapEchoServer, startSoapEcho } from '../../../local/soap-echo';
import { CapturingLogger, CapturingMetrics } from '../core/fakes';
import { startBackend, type TestBackend } from '../core/soap/backend-server';
import {
  billionLaughs,
  CONTENT_TYPES,
  envelope,
  KEY,
  NS,
  proxyEvent,
  soapSettings,
} from '../core/soap/fixtures';

/** The decide port as a test sets it: every request recorded, the answer scripted. */
class FakeDecide {
  readonly requests: SoapAccessRequest[] = [];
  answer: (request: SoapAccessRequest) => SoapAccessDecision | Promise<SoapAccessDecision> = () => ({
    effect: 'allow',
  });
  readonly port: DecideAccess = async (request) => {
    this.requests.push(request);
    return this.answer(request);
  };
}

let echo: SoapEchoServer;
let decide: FakeDecide;
let logger: CapturingLogger;
let metrics: CapturingMetrics;
const backends: TestBackend[] = [];

beforeAll(async () => {
  echo = await startSoapEcho();
});

afterAll(async () => {
  await echo.stop();
});

beforeEach(() => {
  decide = new FakeDecide();
  logger = new CapturingLogger();
  metrics = new CapturingMetrics();
});

afterEach(async () => {
  await Promise.all(backends.splice(0).map((backend) => backend.stop()));
  // Whatever happened, no log line carries the consumer's key.
  expect(JSON.stringify(logger.lines)).not.toContain(KEY);
});

function handler(
  settings: Partial<SoapSettings> = {},
  credentialMode: SoapCredentialMode = 'user_key',
  forward?: ForwardPort,
) {
  return createSoapProxyHandler({
    settings: soapSettings({ soapBackendUrl: echo.url, ...settings }),
    credentialMode,
    decide: decide.port,
    ...(forward && { forward }),
    logger,
    metrics,
  });
}

const event = proxyEvent;
const event12 = (body = envelope({ version: '1.2' })) =>
  proxyEvent(body, { 'content-type': CONTENT_TYPES['1.2'] });

describe('allowed SOAP calls', () => {
  it('ask the core about POST /<method> with the header credential, and return the backend answer as is', async () => {
    const result = await handler()({
      ...event(envelope()),
      headers: { 'Content-Type': CONTENT_TYPES['1.1'], SOAPAction: '"urn:example:GetQuote"' },
    });
    expect(decide.requests).toEqual([
      { credential: { kind: 'user_key', userKey: KEY }, method: 'POST', path: '/GetQuote', query: {} },
    ]);
    expect(result).toMatchObject({
      statusCode: 200,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      isBase64Encoded: false,
    });
    expect(result.body).toContain('<op:operation>GetQuote</op:operation>');
    expect(result.body).toContain('<op:action>&quot;urn:example:GetQuote&quot;</op:action>');
    expect(metrics.counts[SOAP_METRIC.forwarded]).toBe(1);
    expect(metrics.counts[SOAP_METRIC.parseTime]).toBeGreaterThan(0);
    expect(metrics.published).toBe(1);
  });

  it('forward a SOAP 1.2 call with its action in the content type', async () => {
    const result = await handler()(event12());
    expect(result.statusCode).toBe(200);
    expect(result.headers).toEqual({ 'content-type': 'application/soap+xml; charset=utf-8' });
    expect(result.body).toContain('<op:action>urn:example:GetQuote</op:action>');
  });

  it('read app_id and oauth credentials from their elements', async () => {
    const appHeader = '<t:AppId>app-1</t:AppId><t:AppKey>secret-1</t:AppKey><t:method>GetQuote</t:method>';
    await handler({}, 'app_id')(event(envelope({ header: appHeader })));
    const tokenHeader = '<t:AccessToken>token.value.sig</t:AccessToken><t:method>GetQuote</t:method>';
    await handler({}, 'oauth')(event(envelope({ header: tokenHeader })));
    expect(decide.requests.map((request) => request.credential)).toEqual([
      { kind: 'app_id', appId: 'app-1', appKey: 'secret-1' },
      { kind: 'access_token', accessToken: 'token.value.sig' },
    ]);
  });

  it('forward a base64 body as its exact bytes, and a binary answer as base64', async () => {
    const answer = Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x61, 0x3e]);
    const backend = await startBackend((_, response) => {
      response.writeHead(200, { 'content-type': 'text/xml; charset=iso-8859-1' });
      response.end(answer);
    });
    backends.push(backend);
    const bytes = Buffer.from(envelope({ body: '<q:GetQuote xmlns:q="urn:q">ça</q:GetQuote>' }), 'utf8');
    const result = await handler({ soapBackendUrl: backend.url })({
      ...event(bytes.toString('base64')),
      isBase64Encoded: true,
    });
    expect(backend.received[0]?.body.equals(bytes)).toBe(true);
    expect(result).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    expect(Buffer.from(result.body, 'base64').equals(answer)).toBe(true);
  });

  it('pass a backend fault through with its status', async () => {
    const fault =
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault/></soap:Body></soap:Envelope>';
    const backend = await startBackend((_, response) => {
      response.writeHead(500, { 'content-type': 'text/xml' });
      response.end(fault);
    });
    backends.push(backend);
    const result = await handler({ soapBackendUrl: backend.url })(event(envelope()));
    expect(result).toEqual({
      statusCode: 500,
      headers: { 'content-type': 'text/xml' },
      body: fault,
      isBase64Encoded: false,
    });
  });
});

describe('refused SOAP calls', () => {
  it('refuse an action naming another operation than the counted one, in both versions, before the decision', async () => {
    const mismatched11 = await handler()({
      ...event(envelope()),
      headers: { 'Content-Type': CONTENT_TYPES['1.1'], SOAPAction: '"urn:example:PlaceOrder"' },
    });
    expect(mismatched11.statusCode).toBe(500);
    expect(mismatched11.body).toContain('<faultcode>soap:Client</faultcode>');
    expect(mismatched11.body).toContain(
      'The SOAP action names another operation: the SOAP action does not name the operation GetQuote',
    );
    const mismatched12 = await handler()(
      proxyEvent(envelope({ version: '1.2' }), {
        'content-type': 'application/soap+xml; charset=utf-8; action="urn:example:PlaceOrder"',
      }),
    );
    expect(mismatched12.statusCode).toBe(400);
    expect(mismatched12.body).toContain('t:action_mismatch');
    expect(decide.requests).toEqual([]);
    expect(metrics.counts[SOAP_METRIC.forwarded]).toBeUndefined();
    expect(logger.lines.filter((line) => line.message === 'soap call refused')).toHaveLength(2);
  });

  it('answer a Client fault (1.1, HTTP 500) or a Sender fault (1.2, HTTP 400) for an invalid credential', async () => {
    decide.answer = () => ({ effect: 'unauthorized' });
    const result11 = await handler()(event(envelope()));
    expect(result11.statusCode).toBe(500);
    expect(result11.body).toContain(
      '<faultcode>soap:Client</faultcode><faultstring>Invalid credential</faultstring>',
    );
    const result12 = await handler()(event12());
    expect(result12.statusCode).toBe(400);
    expect(result12.body).toContain('t:invalid_credential');
    expect(metrics.counts[SOAP_METRIC.refused]).toBe(2);
  });

  it('name the reason of a denial: limits, no mapping rule (with the operation), platform down', async () => {
    const reasons: Record<string, string> = {
      limits_exceeded: 'Usage limits exceeded',
      no_mapping_rule: 'No mapping rule matches the operation: GetQuote',
      application_not_active: 'Application is not active',
    };
    for (const [reason, text] of Object.entries(reasons)) {
      decide.answer = () => ({ effect: 'deny', reason });
      const result = await handler()(event12());
      expect(result.statusCode).toBe(400);
      expect(result.body).toContain(`t:${reason}`);
      expect(result.body).toContain(`<env:Text xml:lang="en">${text}</env:Text>`);
    }
    decide.answer = () => ({ effect: 'deny', reason: 'platform_unavailable' });
    const down = await handler()(event12());
    expect(down.statusCode).toBe(500);
    expect(down.body).toContain('env:Receiver');
  });

  it('answer a Receiver fault when the access check itself fails', async () => {
    decide.answer = () => Promise.reject(new Error('redis and platform both gone'));
    const result = await handler()(event12());
    expect(result.statusCode).toBe(500);
    expect(result.body).toContain('t:access_check_failed');
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: 'error', attributes: { error: 'redis and platform both gone' } }),
    );
  });

  it('never ask the core about a request whose envelope or header is refused', async () => {
    const cases: readonly [APIGatewayProxyEvent, number, string][] = [
      [event(envelope({ header: '<t:method>GetQuote</t:method>' })), 500, 'Missing credential'],
      [
        event(envelope({ header: `<t:ApiKey>${KEY}</t:ApiKey><t:ApiKey>x</t:ApiKey>` })),
        500,
        'Invalid credential',
      ],
      [event(envelope({ header: `<t:ApiKey>${KEY}</t:ApiKey>` })), 500, 'Method missing'],
      [event(billionLaughs()), 500, 'declarations are not accepted'],
      [event('{"not":"xml"}'), 500, 'Unreadable envelope'],
      [event(envelope(), { 'content-type': 'application/json' }), 415, 'Unsupported media type'],
      [event(envelope({ body: `<Op>${'x'.repeat(2048)}</Op>` })), 413, 'Request too large'],
      [
        event(envelope().replace(/http:\/\/schemas\.xmlsoap\.org\/soap\/envelope\//, 'urn:old')),
        500,
        'VersionMismatch',
      ],
    ];
    for (const [request, status, text] of cases) {
      const result = await handler({ soapMaxBodyBytes: 2048 })(request);
      expect(result.statusCode, text).toBe(status);
      expect(result.body).toContain(text);
    }
    expect(decide.requests).toEqual([]);
  });

  it('answer a Receiver fault if the proxy itself breaks', async () => {
    const broken: ForwardPort = () => Promise.reject(new Error('bug'));
    const result = await handler({}, 'user_key', broken)(event12());
    expect(result.statusCode).toBe(500);
    expect(result.body).toContain('t:proxy_error');
    expect(metrics.counts[SOAP_METRIC.proxyError]).toBe(1);
  });
});

describe('a failing backend', () => {
  it('is a 502 Server fault when it is down', async () => {
    const url = `http://127.0.0.1:${await freePort()}/soap`;
    const result = await handler({ soapBackendUrl: url })(event(envelope()));
    expect(result.statusCode).toBe(502);
    expect(result.body).toContain('<faultcode>soap:Server</faultcode>');
    expect(result.body).toContain('The SOAP backend is unavailable: connection refused');
    expect(decide.requests).toHaveLength(1);
    expect(metrics.counts[SOAP_METRIC.backendUnavailable]).toBe(1);
  });

  it('is a 504 Receiver fault when it does not answer in time', async () => {
    const backend = await startBackend(() => {});
    backends.push(backend);
    const result = await handler({ soapBackendUrl: backend.url, soapBackendTimeoutMs: 200 })(event12());
    expect(result.statusCode).toBe(504);
    expect(result.body).toContain('t:backend_timeout');
    expect(metrics.counts[SOAP_METRIC.backendTimeout]).toBe(1);
  });

  it('gives the usage back when the backend fails, and only then', async () => {
    let givenBack = 0;
    decide.answer = () => ({ effect: 'allow', giveBack: async () => givenBack++ });
    expect((await handler()(event(envelope()))).statusCode).toBe(200);
    expect(givenBack).toBe(0);
    const down = `http://127.0.0.1:${await freePort()}/soap`;
    expect((await handler({ soapBackendUrl: down })(event(envelope()))).statusCode).toBe(502);
    const backend = await startBackend(() => {});
    backends.push(backend);
    const slow = handler({ soapBackendUrl: backend.url, soapBackendTimeoutMs: 200 });
    expect((await slow(event12())).statusCode).toBe(504);
    expect(givenBack).toBe(2);
    expect(metrics.counts[SOAP_METRIC.usageGivenBack]).toBe(2);
  });

  it('still answers the backend fault when the usage cannot be given back, and says so', async () => {
    decide.answer = () => ({
      effect: 'allow',
      giveBack: async () => {
        throw new Error('redis down');
      },
    });
    const down = `http://127.0.0.1:${await freePort()}/soap`;
    expect((await handler({ soapBackendUrl: down })(event(envelope()))).statusCode).toBe(502);
    expect(metrics.counts[SOAP_METRIC.giveBackFailed]).toBe(1);
    expect(JSON.stringify(logger.lines)).toContain('stays counted');
  });
});

describe('the port', () => {
  it("takes the access core's decision type as it is", () => {
    const coreDecision: AccessDecision = {
      effect: 'deny',
      credentialId: 'id',
      plan: '',
      metrics: '',
      reason: 'limits_exceeded',
    };
    const decision: SoapAccessDecision = coreDecision;
    expect(decision.effect).toBe('deny');
  });

  it('reads headers whatever their spelling', () => {
    expect(headerValue({ 'CONTENT-TYPE': 'text/xml' }, 'content-type')).toBe('text/xml');
    expect(headerValue(null, 'content-type')).toBeUndefined();
  });

  it('uses the extension namespace of its settings', async () => {
    decide.answer = () => ({ effect: 'unauthorized' });
    const result = await handler()(event12());
    expect(result.body).toContain(`xmlns:t="${NS}"`);
  });
});
