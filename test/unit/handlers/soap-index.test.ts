import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENV, LOCAL_SECRET_ENV } from '../../../core/settings/config';
import { SOAP_ENV } from '../../../core/soap/settings';
import { freePort as closedPort } from '../../../local/redis';
import { CONTENT_TYPES, envelope, proxyEvent } from '../core/soap/fixtures';

const event = () => proxyEvent(envelope({ version: '1.2' }), { 'Content-Type': CONTENT_TYPES['1.2'] });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('SOAP proxy Lambda entry', () => {
  it('answers a Receiver Fault while it cannot start, then decides through the access core once configured', async () => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.stubEnv(SOAP_ENV.soapBackendUrl, '');
    const { handler } = await import('../../../lambdas/soap/index');
    const refused = await handler(event());
    expect(refused).toMatchObject({
      statusCode: 500,
      headers: { 'content-type': 'application/soap+xml; charset=utf-8' },
    });
    expect(refused.body).toContain('t:proxy_error');

    vi.stubEnv(SOAP_ENV.soapBackendUrl, `http://127.0.0.1:${await closedPort()}/soap`);
    vi.stubEnv(SOAP_ENV.soapNamespace, 'urn:example:access');
    vi.stubEnv(ENV.serviceId, 's1');
    vi.stubEnv(ENV.platformUrl, `http://127.0.0.1:${await closedPort()}`);
    vi.stubEnv(LOCAL_SECRET_ENV.providerKey, 'pk-local');
    vi.stubEnv(
      ENV.mappingRules,
      JSON.stringify([{ method: 'POST', pattern: '/GetQuote', metric: 'hits', delta: 1 }]),
    );
    const answered = await handler(event());
    expect(answered.statusCode).toBe(500);
    expect(answered.body).toContain('t:platform_unavailable');
  });
});
