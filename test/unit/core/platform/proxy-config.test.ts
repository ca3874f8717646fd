/**
 * The platform's proxy configuration read into mapping rules: porta's `latest.json` body, the fields
 * APIcast reads, the checks given rules get, the bounds, and what each status means. The reader is run
 * against a canned HTTP server for statuses porta answers and the local platform does not (5xx, a body
 * that is too large, a server that never answers).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_PLATFORM_RULES,
  MAX_PROXY_CONFIG_BYTES,
  ProxyConfigReader,
  parseProxyConfig,
} from '../../../../core/platform/proxy-config';
import { type CannedServer, startCannedServer } from './canned-server';

function body(rules: unknown[], version: unknown = 3): string {
  return JSON.stringify({
    proxy_config: {
      id: 41,
      version,
      environment: 'production',
      content: { id: 2555417735060, proxy: { api_test_path: '/', proxy_rules: rules } },
    },
  });
}

/** A proxy rule as porta's `ProxyRule#as_json` writes it. */
function portaRule(overrides: Record<string, unknown> = {}) {
  return {
    id: 7,
    proxy_id: 12,
    http_method: 'GET',
    pattern: '/v1/words/{word}.json',
    metric_id: 99,
    metric_system_name: 'get_word',
    delta: 2,
    tenant_id: 1,
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    redirect_url: null,
    position: 1,
    last: false,
    owner_id: 12,
    owner_type: 'Proxy',
    parameters: ['word'],
    querystring_parameters: {},
    ...overrides,
  };
}

describe('parseProxyConfig', () => {
  it('reads the version and each rule as APIcast does: method, pattern, metric system name, delta, last', () => {
    expect(parseProxyConfig(body([portaRule(), portaRule({ pattern: '/', last: true, delta: 1 })]))).toEqual({
      ok: true,
      version: 3,
      rules: [
        { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 2 },
        { method: 'GET', pattern: '/', metric: 'get_word', delta: 1, last: true },
      ],
    });
  });

  it('counts a rule without a delta as 0 (APIcast adds `delta or 0`)', () => {
    const read = parseProxyConfig(body([portaRule({ delta: undefined })]));
    expect(read.ok && read.rules[0]?.delta).toBe(0);
  });

  it('reads a configuration without rules as no rules (every call then counts one hit)', () => {
    expect(parseProxyConfig(body([]))).toEqual({ ok: true, version: 3, rules: [] });
  });

  it.each([
    ['not JSON', '{"proxy_config":', /not JSON/],
    ['no proxy_config', '{"proxy_configs":[]}', /no proxy_config/],
    ['a version that is not an integer', body([], '3'), /version is not an integer/],
    [
      'no proxy_rules list',
      JSON.stringify({ proxy_config: { version: 1, content: { proxy: {} } } }),
      /proxy_rules is not a list/,
    ],
    ['a rule that is not an object', body(['GET /']), /proxy_rules\[0\] must be an object/],
    [
      'a rule with a metric id only',
      body([portaRule({ metric_system_name: undefined })]),
      /proxy_rules\[0\]\.metric_system_name is required/,
    ],
    [
      'a method no gateway knows',
      body([portaRule({ http_method: 'BREW' })]),
      /proxy_rules\[0\]\.method must be an HTTP method/,
    ],
    [
      'a pattern not starting with /',
      body([portaRule({ pattern: 'v1' })]),
      /proxy_rules\[0\]\.pattern must start with \//,
    ],
    ['a negative delta', body([portaRule({ delta: -1 })]), /proxy_rules\[0\]\.delta must be an integer/],
  ])('refuses %s, saying what is wrong', (_, text, problem) => {
    const read = parseProxyConfig(text);
    expect(read).toMatchObject({ ok: false, kind: 'invalid' });
    expect(!read.ok && read.message).toMatch(problem);
  });

  it('refuses more rules than its bound, and a body past its size, before reading them', () => {
    const many = body(Array.from({ length: MAX_PLATFORM_RULES + 1 }, () => portaRule()));
    expect(parseProxyConfig(many)).toMatchObject({
      ok: false,
      kind: 'invalid',
      message: expect.stringMatching(/more than 2000/),
    });
    const huge = body([portaRule({ redirect_url: 'x'.repeat(MAX_PROXY_CONFIG_BYTES) })]);
    expect(parseProxyConfig(huge)).toMatchObject({
      ok: false,
      message: 'the proxy configuration is too large',
    });
  });
});

describe('ProxyConfigReader', () => {
  let server: CannedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function readerAnswering(status: number, text = '', hang = false) {
    server = await startCannedServer((_request, response) => {
      if (hang) return;
      response.writeHead(status, { 'content-type': 'application/json' }).end(text);
    });
    return new ProxyConfigReader({
      adminApiUrl: server.url,
      accessToken: 'secret-admin-token',
      serviceId: '2555417735060',
      environment: 'staging',
      timeoutMs: 200,
    });
  }

  it('asks the latest configuration of the environment with the token, and reads it', async () => {
    const reader = await readerAnswering(200, body([portaRule()]));
    expect(await reader.read()).toMatchObject({ ok: true, version: 3 });
    const [request] = server?.requests ?? [];
    expect(request?.path).toBe('/admin/api/services/2555417735060/proxy/configs/staging/latest.json');
    expect(request?.query.get('access_token')).toBe('secret-admin-token');
  });

  it.each([
    [404, 'missing'],
    [403, 'refused'],
    [400, 'refused'],
    [503, 'unavailable'],
    [302, 'invalid'],
  ])('reads HTTP %i as %s', async (status, kind) => {
    const reader = await readerAnswering(status, '{"error":"x"}');
    expect(await reader.read()).toEqual({
      ok: false,
      kind,
      status,
      message: `the platform answered HTTP ${status}`,
    });
  });

  it('gives up at its timeout, and its failure never carries the token', async () => {
    const reader = await readerAnswering(200, '', true);
    const read = await reader.read();
    expect(read).toMatchObject({ ok: false, kind: 'unavailable' });
    expect(JSON.stringify(read)).not.toContain('secret-admin-token');
  });

  it('stops reading an answer larger than its bound', async () => {
    const reader = await readerAnswering(200, 'x'.repeat(MAX_PROXY_CONFIG_BYTES + 1));
    expect(await reader.read()).toMatchObject({
      ok: false,
      kind: 'unavailable',
      message: 'platform answer is too large',
    });
  });
});
