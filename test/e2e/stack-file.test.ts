import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/settings/config';
import {
  DEMO_STACK_FILE,
  gatewayConfig,
  LOCAL_DEFAULTS,
  LOCAL_REPORT_WINDOW_SECONDS,
  parseStackFile,
  readStackFile,
} from '../../local/stack-file';

const SERVICE = {
  id: 'svc-1',
  providerKey: 'pk-file',
  authentication: 'user_key',
  metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
  plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 10 }] }],
  applications: [{ id: 'app-1', userKey: 'key-1', plan: 'Basic' }],
};

function file(gateway: unknown, extra: Record<string, unknown> = {}) {
  return { platform: { services: [SERVICE] }, gateway, ...extra };
}

const GATEWAY = { serviceId: 'svc-1', routes: ['GET /v1/words/{word}'] };

describe('local stack file', () => {
  it('reads the bundled demo: a user_key API, an app_id API under /appid, an oauth API under /oauth-api and an HTTP API under /http on stage prod', () => {
    const demo = readStackFile(DEMO_STACK_FILE, {});
    expect(demo.gateways.map((gateway) => [gateway.basePath, gateway.configInput.credentialMode])).toEqual([
      ['', 'user_key'],
      ['/appid', 'app_id'],
      ['/oauth-api', 'oauth'],
      ['/http', 'user_key'],
    ]);
    expect(demo.gateways.map((gateway) => [gateway.apiType, gateway.stage])).toEqual([
      ['rest', undefined],
      ['rest', undefined],
      ['rest', undefined],
      ['http', 'prod'],
    ]);
    expect(demo.platform?.services.map((service) => service.authentication)).toEqual([
      'user_key',
      'app_id',
      'oidc',
    ]);
    expect(demo.gateways.map((gateway) => [gateway.cors, gateway.docs.version])).toEqual([
      [{ allowOrigins: ['*'] }, 'v1'],
      [{ allowOrigins: ['*'] }, 'v1'],
      [{ allowOrigins: ['*'] }, 'v1'],
      [{ allowOrigins: ['*'] }, 'v1'],
    ]);
  });

  it('reads apiType (default rest) and a named stage, and refuses others naming the setting', () => {
    const read = (fields: object) => parseStackFile(file({ ...GATEWAY, ...fields }), {}).gateways[0];
    expect(read({})).toMatchObject({ apiType: 'rest' });
    expect(read({ apiType: 'http', stage: 'prod' })).toMatchObject({ apiType: 'http', stage: 'prod' });
    expect(read({ apiType: 'http', stage: '$default' })?.stage).toBeUndefined();
    expect(() => read({ apiType: 'websocket' })).toThrow(/gateway\.apiType.*must be one of rest, http/);
    expect(() => read({ stage: 'a/b' })).toThrow(/gateway\.stage.*stage name/);
  });

  it('has no CORS and default docs settings unless the file says so', () => {
    const [gateway] = parseStackFile(file(GATEWAY), {}).gateways;
    expect(gateway?.cors).toBeUndefined();
    expect(gateway?.docs).toEqual({ version: 'v1' });
    expect(gateway?.soap).toBeUndefined();
  });

  it('adds the SOAP route with any SOAP setting: POST /soap to the demo echo unless it names a backend', () => {
    const demo = readStackFile(DEMO_STACK_FILE, {});
    expect(demo.gateways.map((gateway) => gateway.soap?.route.resource)).toEqual([
      '/soap',
      undefined,
      undefined,
      undefined,
    ]);
    const [echoed] = parseStackFile(file({ ...GATEWAY, soapNamespace: 'urn:x' }), {}).gateways;
    expect(echoed?.soap).toMatchObject({
      route: { method: 'POST', resource: '/soap' },
      settings: { soapNamespace: 'urn:x', soapBackendTimeoutMs: 10_000, soapMaxBodyBytes: 1_048_576 },
    });
    expect(echoed?.soap?.soapBackendUrl).toBeUndefined();
    const [named] = parseStackFile(
      file({ ...GATEWAY, soapPath: '/services/quotes', soapBackendUrl: 'https://soap.example.com/q' }),
      {},
    ).gateways;
    expect(named?.soap).toMatchObject({
      route: { resource: '/services/quotes' },
      soapBackendUrl: 'https://soap.example.com/q',
    });
  });

  it('takes the credential mode and provider key from the local platform and applies local defaults', () => {
    const stack = parseStackFile(file(GATEWAY), {});
    const config = gatewayConfig(stack.gateways[0] as never, 'http://127.0.0.1:9999');
    expect(config).toMatchObject({
      serviceId: 'svc-1',
      platformUrl: 'http://127.0.0.1:9999',
      platformAuthKind: 'provider_key',
      platformCredential: 'pk-file',
      credentialMode: 'user_key',
      reportWindowSeconds: LOCAL_REPORT_WINDOW_SECONDS,
      failureMode: 'strict',
    });
    expect(stack.local).toEqual(LOCAL_DEFAULTS);
  });

  it("names applications in alerts through the local platform's admin API, or the one the file names", () => {
    const local = gatewayConfig(
      parseStackFile(file(GATEWAY), {}).gateways[0] as never,
      'http://127.0.0.1:9999',
    );
    expect(local).toMatchObject({ adminApiUrl: 'http://127.0.0.1:9999', adminAccessToken: 'pk-file' });
    const external = parseStackFile(
      {
        gateway: {
          ...GATEWAY,
          platformUrl: 'http://127.0.0.1:7000/',
          providerKey: 'pk',
          adminApiUrl: 'https://acme-admin.example.com/',
          adminAccessToken: 'admin-file',
        },
      },
      {},
    );
    expect(gatewayConfig(external.gateways[0] as never, 'unused')).toMatchObject({
      adminApiUrl: 'https://acme-admin.example.com',
      adminAccessToken: 'admin-file',
    });
    const fromEnv = parseStackFile(
      { gateway: { ...GATEWAY, platformUrl: 'http://127.0.0.1:7000/', providerKey: 'pk' } },
      { THREESCALE_ADMIN_ACCESS_TOKEN: 'admin-env' },
    );
    expect(gatewayConfig(fromEnv.gateways[0] as never, 'unused')).toMatchObject({
      adminAccessToken: 'admin-env',
    });
    expect(gatewayConfig(fromEnv.gateways[0] as never, 'unused').adminApiUrl).toBeUndefined();
  });

  it('uses a platformUrl with the provider key from the file, else THREESCALE_PROVIDER_KEY, and starts no platform', () => {
    const external = { ...GATEWAY, platformUrl: 'http://127.0.0.1:7000/' };
    const fromFile = parseStackFile({ gateway: { ...external, serviceToken: 'st-file' } }, {});
    expect(fromFile.platform).toBeUndefined();
    expect(gatewayConfig(fromFile.gateways[0] as never, 'unused')).toMatchObject({
      platformUrl: 'http://127.0.0.1:7000',
      platformAuthKind: 'service_token',
      platformCredential: 'st-file',
    });
    const fromEnv = parseStackFile(file(external), { THREESCALE_PROVIDER_KEY: 'pk-env' });
    expect(fromEnv.platform).toBeUndefined();
    expect(gatewayConfig(fromEnv.gateways[0] as never, 'unused')).toMatchObject({
      platformAuthKind: 'provider_key',
      platformCredential: 'pk-env',
    });
  });

  it.each([
    ['no gateway', { platform: { services: [SERVICE] } }, 'gateway is required'],
    [
      'an unknown top-level section',
      file(GATEWAY, { gatways: {} }),
      'the stack file.gatways is not a known setting',
    ],
    [
      'a typo in a gateway setting',
      file({ ...GATEWAY, failureMod: 'allow' }),
      'gateway.failureMod is not a known',
    ],
    [
      'a bad failure mode',
      file({ ...GATEWAY, failureMode: 'lenient' }),
      'gateway.failureMode must be one of',
    ],
    [
      'a bad report window',
      file([{ ...GATEWAY, reportWindowSeconds: -1 }]),
      'gateway[0].reportWindowSeconds must be',
    ],
    ['no routes', file({ serviceId: 'svc-1' }), 'gateway.routes must list'],
    ['a bad route', file({ ...GATEWAY, routes: ['GET v1'] }), 'gateway.routes[0] resource must start with /'],
    ['an unknown service', file({ ...GATEWAY, serviceId: 'svc-9' }), 'gateway.serviceId names no service'],
    ['no platform section', { gateway: GATEWAY }, 'gateway.serviceId needs the platform section'],
    [
      'a platformUrl without credential',
      { gateway: { ...GATEWAY, platformUrl: 'http://127.0.0.1:1' } },
      'gateway.providerKey is required',
    ],
    [
      'a mode the service does not use',
      file({ ...GATEWAY, credentialMode: 'app_id' }),
      'gateway.credentialMode is app_id',
    ],
    ['two gateways on one base path', file([GATEWAY, GATEWAY]), 'gateway[1].basePath repeats ""'],
    ['a bad base path', file({ ...GATEWAY, basePath: 'appid' }), 'gateway.basePath must be'],
    [
      'a bad mapping rule',
      file({ ...GATEWAY, mappingRules: [{ method: 'GET', pattern: 'x', metric: 'hits' }] }),
      'gateway.mappingRules[0].pattern',
    ],
    [
      'a mapping rule naming a metric the platform section lacks',
      file({ ...GATEWAY, mappingRules: [{ method: 'GET', pattern: '/v1', metric: 'get_wrod', delta: 1 }] }),
      'gateway.mappingRules[0].metric names a metric service svc-1 does not have ("get_wrod"; it has hits, get_word)',
    ],
    [
      'a mapping rule with an unknown field',
      file({ ...GATEWAY, mappingRules: [{ method: 'GET', pattern: '/v1', metric: 'hits', delat: 5 }] }),
      'gateway.mappingRules[0].delat is not a known setting',
    ],
    [
      'a user key the gateway would always refuse (a space)',
      file(GATEWAY, {
        platform: {
          services: [{ ...SERVICE, applications: [{ id: 'a', userKey: 'my key', plan: 'Basic' }] }],
        },
      }),
      'platform.services[0].applications[0].userKey is a key the gateway always refuses (bad_characters)',
    ],
    [
      'an app key the gateway would always refuse (over 256 bytes)',
      file(GATEWAY, {
        platform: {
          services: [
            {
              ...SERVICE,
              authentication: 'app_id',
              applications: [{ id: 'a', appKeys: ['k'.repeat(257)], plan: 'Basic' }],
            },
          ],
        },
      }),
      'platform.services[0].applications[0].appKeys[0] is a key the gateway always refuses (too_long)',
    ],
    ['a bad local port', file(GATEWAY, { local: { port: 70000 } }), 'local.port must be'],
    ['an unknown Redis choice', file(GATEWAY, { local: { redis: 'sharded' } }), 'local.redis must be auto'],
    ['an empty cluster', file(GATEWAY, { local: { redis: { cluster: [] } } }), 'local.redis.cluster must be'],
    [
      'a cluster seed without a port',
      file(GATEWAY, { local: { redis: { cluster: ['127.0.0.1:7000', '127.0.0.1'] } } }),
      'local.redis.cluster[1] must be host:port',
    ],
    [
      'an origin with a path',
      file({ ...GATEWAY, cors: { allowOrigins: ['https://portal.example.com/docs'] } }),
      'gateway.cors.allowOrigins[0] must be "*" or an origin',
    ],
    [
      'an OPTIONS route when the API answers preflights itself',
      file({ ...GATEWAY, cors: { allowOrigins: ['*'] }, routes: ['GET /a', 'OPTIONS /a'] }),
      'gateway.routes[1] is an OPTIONS method: with gateway.cors the API answers preflights itself',
    ],
    [
      'a route where the documentation is served',
      file({ ...GATEWAY, routes: ['GET /a', 'GET /docs/{page}'] }),
      'gateway.routes[1] is under /docs, where the API serves its documentation',
    ],
    ['a bad docs setting', file({ ...GATEWAY, docs: { version: 2 } }), 'gateway.docs.version is required'],
    [
      'a SOAP path with a parameter',
      file({ ...GATEWAY, soapPath: '/soap/{op}' }),
      'gateway.soapPath must be a literal path',
    ],
    [
      'a SOAP path a route serves',
      file({ ...GATEWAY, routes: ['ANY /soap'], soapPath: '/soap' }),
      'gateway.soapPath is a path a route',
    ],
    [
      'a SOAP path under the docs',
      file({ ...GATEWAY, soapPath: '/docs/soap' }),
      'gateway.soapPath is under /docs',
    ],
    [
      'a bad SOAP namespace',
      file({ ...GATEWAY, soapNamespace: 'not a uri' }),
      'gateway.soapNamespace must be an absolute URI',
    ],
    ['a bad SOAP backend URL', file({ ...GATEWAY, soapBackendUrl: 'ftp://x' }), 'gateway.soapBackendUrl'],
    [
      'a SOAP body cap over 4 MiB',
      file({ ...GATEWAY, soapMaxBodyBytes: 5_000_000 }),
      'gateway.soapMaxBodyBytes must be',
    ],
    [
      'a bad platform section',
      file(GATEWAY, {
        platform: {
          services: [{ ...SERVICE, plans: [], applications: [{ id: 'a', userKey: 'k', plan: 'Gold' }] }],
        },
      }),
      'platform.services[0].applications[0].plan',
    ],
  ])('refuses %s with a message naming the setting', (_, value, message) => {
    expect(() => parseStackFile(value, {})).toThrow(ConfigError);
    expect(() => parseStackFile(value, {})).toThrow(message);
  });

  it('takes a Redis of its own, a local cluster, or a running cluster by its seeds', () => {
    const redisOf = (redis: unknown) => parseStackFile(file(GATEWAY, { local: { redis } }), {}).local.redis;
    expect(redisOf({ host: '127.0.0.1', port: 6379 })).toEqual({ host: '127.0.0.1', port: 6379 });
    expect(redisOf('cluster')).toBe('cluster');
    expect(redisOf({ cluster: ['127.0.0.1:7000', '127.0.0.1:7001'] })).toEqual({
      cluster: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ],
    });
  });

  it('refuses a file that repeats a key, naming where', () => {
    const directory = mkdtempSync(join(tmpdir(), 'stack-file-'));
    const repeated = join(directory, 'repeated.json');
    writeFileSync(
      repeated,
      JSON.stringify(file(GATEWAY)).replace(
        '"routes":',
        '"failureMode":"allow","failureMode":"strict","routes":',
      ),
    );
    expect(() => readStackFile(repeated, {})).toThrow(ConfigError);
    expect(() => readStackFile(repeated, {})).toThrow('gateway.failureMode is given twice');
  });

  it('names the file when it is not JSON or cannot be read', () => {
    const directory = mkdtempSync(join(tmpdir(), 'stack-file-'));
    const broken = join(directory, 'broken.json');
    writeFileSync(broken, '{ "gateway": ');
    expect(() => readStackFile(broken, {})).toThrow(`--config ${broken} is not valid JSON`);
    expect(() => readStackFile(join(directory, 'missing.json'), {})).toThrow('--config cannot be read');
  });
});
