/**
 * The Swagger 2.0 document of a protected API: validated with a Swagger 2.0 validator, and checked for what
 * a consumer reads in it (routes, metric per operation, credentials, refusals, the provider's additions).
 */
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { accessGatewayResponses } from '../../../contract/gateway-responses';
import { parseRoute } from '../../../contract/routes';
import { credentialPromptOf } from '../../../core/credentials';
import { parseConfig } from '../../../core/settings/config';
import {
  type CountedPath,
  DEFAULT_DOCS_VERSION,
  deepMerge,
  parseDocsSettings,
  type SwaggerDocument,
  swaggerDocument,
} from '../../../lambdas/docs/swagger';
import { DEMO_STACK_FILE, gatewayConfig, parseStackFile, stagePathOf } from '../../../local/stack-file';

type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  parameters: Record<string, unknown>[];
  responses: Record<string, unknown>;
  security?: unknown[];
  'x-metrics'?: CountedPath[];
};
type Paths = Record<string, Record<string, Operation>>;

/** The documents npm start serves for a stack file, one per API. */
function documentsOf(stackFile: unknown): SwaggerDocument[] {
  return parseStackFile(stackFile, {}).gateways.map((gateway) =>
    swaggerDocument({
      basePath: `${gateway.basePath}${stagePathOf(gateway)}`,
      routes: gateway.routes,
      config: gatewayConfig(gateway, 'http://127.0.0.1:1'),
      settings: gateway.docs,
    }),
  );
}

/** Validates against the Swagger 2.0 schema and its rules (path parameters, unique operation ids...). */
async function expectValidSwagger2(document: SwaggerDocument): Promise<void> {
  await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
}

function paths(document: SwaggerDocument): Paths {
  return document.paths as Paths;
}

/** Every documented operation as "METHOD path" with the usage it counts (null: refused). */
function metricsByOperation(document: SwaggerDocument): Record<string, CountedPath[] | undefined> {
  return Object.fromEntries(
    Object.entries(paths(document)).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => [
        `${method.toUpperCase()} ${path}`,
        operation['x-metrics'],
      ]),
    ),
  );
}

const demo = documentsOf(JSON.parse(readFileSync(DEMO_STACK_FILE, 'utf8')));

/** A stack file of the shape the product is tried with: limits hidden, ANY and greedy routes, both modes. */
const HIDDEN_STYLE = {
  platform: {
    services: [
      {
        id: 'svc-keys',
        providerKey: 'pk-hidden',
        authentication: 'user_key',
        metrics: [
          {
            name: 'hits',
            children: [
              { name: 'get_word' },
              { name: 'post_word' },
              { name: 'searches' },
              { name: 'item_reads' },
            ],
          },
        ],
        plans: [{ name: 'Hidden', limits: [{ metric: 'hits', period: 'minute', value: 3 }] }],
        applications: [{ id: 'app-k', userKey: 'key-k', plan: 'Hidden' }],
      },
      {
        id: 'svc-apps',
        providerKey: 'pk-hidden',
        authentication: 'app_id',
        metrics: [{ name: 'hits' }],
        plans: [{ name: 'Hidden', limits: [{ metric: 'hits', period: 'day', value: 1 }] }],
        applications: [{ id: 'app-a', appKeys: ['key-a'], plan: 'Hidden' }],
      },
    ],
  },
  gateway: [
    {
      serviceId: 'svc-keys',
      credentialHeader: 'X-User-Key',
      routes: [
        'GET /v1/words/{word}',
        'POST /v1/words/{word}',
        'ANY /',
        'ANY /{proxy+}',
        'GET /v2/items/{id}',
        'DELETE /v2/items/{id}',
      ],
      mappingRules: [
        { method: 'ANY', pattern: '/', metric: 'hits', delta: 1 },
        { method: 'GET', pattern: '/v1/words/{word}.json', metric: 'get_word', delta: 1 },
        { method: 'POST', pattern: '/v1/words/{word}.json', metric: 'post_word', delta: 1 },
        { method: 'GET', pattern: '/search?q={q}', metric: 'searches', delta: 1 },
        { method: 'GET', pattern: '/v2/items/{id}$', metric: 'item_reads', delta: 2 },
      ],
    },
    { serviceId: 'svc-apps', basePath: '/apps', routes: ['ANY /{proxy+}', 'GET /status'] },
  ],
};
const hidden = documentsOf(HIDDEN_STYLE);

describe('the Swagger 2.0 document of the demo', () => {
  it('validates as Swagger 2.0, for each of its APIs', async () => {
    expect(demo).toHaveLength(4);
    for (const document of demo) await expectValidSwagger2(document);
  });

  it('fails validation when a path parameter is not declared (the validator is not lenient)', async () => {
    const broken = structuredClone(demo[0]) as SwaggerDocument;
    (paths(broken)['/v1/words/{word}']?.get as Operation).parameters = [];
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/word/);
  });

  it('lists every route with the metric each operation counts', () => {
    const [user, app] = demo as [SwaggerDocument, SwaggerDocument];
    expect(metricsByOperation(user)).toEqual({
      'GET /v1/words/{word}': [
        { rule: '/v1/words/{word}.json', metrics: { get_word: 1 } },
        { metrics: null },
      ],
      'POST /v1/words/{word}': [
        { rule: '/v1/words/{word}.json', metrics: { post_word: 1 } },
        { metrics: null },
      ],
    });
    expect(metricsByOperation(app)).toEqual({
      'GET /v1/words/{word}': [
        { rule: '/v1/words/{word}.json', metrics: { get_word: 1 } },
        { metrics: null },
      ],
    });
    const get = paths(user)['/v1/words/{word}']?.get as Operation;
    expect(get.summary).toBe('Counts get_word');
    expect(get.description).toBe(
      '- `GET /v1/words/{word}.json` counts `get_word` +1.\n' +
        '- Other paths: no mapping rule matches, refused with 403 `no_mapping_rule`.\n\n' +
        'Throttled (calls beyond are refused with 403 `rate_limited`; `reset` says in how many seconds to retry):\n' +
        '- plan `Basic`: 1 per second, 3 at once',
    );
    const unthrottled = paths(app)['/v1/words/{word}']?.get as Operation;
    expect(unthrottled.description).not.toContain('Throttled');
  });

  it('is mounted where the API is, and carries the version, title and description of its settings', () => {
    const [user, app] = demo as [SwaggerDocument, SwaggerDocument];
    expect(user.basePath).toBe('/');
    expect(app.basePath).toBe('/appid');
    expect(user.info).toEqual({
      title: 'Words API (demo, user key)',
      description: expect.stringContaining('demo-key-1'),
      version: 'v1',
    });
  });

  it("merges the demo's own additions: the word parameter described, the echo as the 200 schema", () => {
    const get = paths(demo[0] as SwaggerDocument)['/v1/words/{word}']?.get as Operation;
    expect(get.parameters).toEqual([
      {
        name: 'word',
        in: 'path',
        required: true,
        type: 'string',
        description: 'A word and its format',
        'x-example': 'hello.json',
      },
    ]);
    expect(get.responses['200']).toEqual({
      description: 'The echo of your call',
      schema: { $ref: '#/definitions/Echo' },
    });
    expect(get.responses['401']).toEqual({ $ref: '#/responses/Unauthorized' });
  });
});

describe('the Swagger 2.0 document of a hidden-style stack file', () => {
  it('validates as Swagger 2.0, for both credential modes', async () => {
    for (const document of hidden) await expectValidSwagger2(document);
  });

  it('documents ANY as each method the resource has no route of, and a greedy {proxy+} as {proxy}', () => {
    const [keys, apps] = hidden as [SwaggerDocument, SwaggerDocument];
    const anyMethods = ['get', 'post', 'put', 'patch', 'delete', 'head'];
    expect(Object.keys(paths(keys)).sort()).toEqual(['/', '/v1/words/{word}', '/v2/items/{id}', '/{proxy}']);
    expect(Object.keys(paths(keys)['/'] ?? {})).toEqual(anyMethods);
    expect(Object.keys(paths(keys)['/{proxy}'] ?? {})).toEqual(anyMethods);
    expect(Object.keys(paths(keys)['/v1/words/{word}'] ?? {})).toEqual(['get', 'post']);
    expect(Object.keys(paths(keys)['/v2/items/{id}'] ?? {})).toEqual(['get', 'delete']);
    expect(paths(keys)['/{proxy}']?.get?.parameters).toEqual([
      {
        name: 'proxy',
        in: 'path',
        required: true,
        type: 'string',
        description: 'The rest of the path: one or more segments.',
      },
    ]);
    expect(paths(keys)['/{proxy}']?.put?.parameters).toContainEqual({
      name: 'body',
      in: 'body',
      required: false,
      schema: {},
    });
    expect(Object.keys(paths(apps)).sort()).toEqual(['/status', '/{proxy}']);
    expect(apps.basePath).toBe('/apps');
  });

  it('says per operation what each of its paths counts, as the authorizer maps them', () => {
    const metrics = metricsByOperation(hidden[0] as SwaggerDocument);
    expect(metrics['GET /v1/words/{word}']).toEqual([
      { rule: '/v1/words/{word}.json', metrics: { hits: 1, get_word: 1 } },
      { metrics: { hits: 1 } },
    ]);
    // `/search?q=` and `/` are paths of other resources for some methods: each lands where the gateway routes it.
    expect(metrics['GET /{proxy}']).toEqual([
      { rule: '/search?q={q}', metrics: { hits: 1, searches: 1 } },
      { metrics: { hits: 1 } },
    ]);
    expect(metrics['POST /{proxy}']).toEqual([{ metrics: { hits: 1 } }]);
    expect(metrics['GET /']).toEqual([{ rule: '/', metrics: { hits: 1 } }]);
    expect(metrics['GET /v2/items/{id}']).toEqual([
      { rule: '/v2/items/{id}$', metrics: { hits: 1, item_reads: 2 } },
    ]);
    expect(metrics['DELETE /v2/items/{id}']).toEqual([{ metrics: { hits: 1 } }]);
    const other = paths(hidden[0] as SwaggerDocument)['/{proxy}']?.get;
    expect(other?.summary).toBe('Counts hits, searches');
    expect(other?.description).toBe(
      '- `GET /search?q={q}` counts `hits` +1, `searches` +1.\n- Other paths count `hits` +1.',
    );
  });

  it('says every call counts one hit when the API has no mapping rules', () => {
    const metrics = metricsByOperation(hidden[1] as SwaggerDocument);
    expect(metrics['GET /status']).toEqual([{ metrics: { hits: 1 } }]);
    expect(metrics['DELETE /{proxy}']).toEqual([{ metrics: { hits: 1 } }]);
    expect(paths(hidden[1] as SwaggerDocument)['/status']?.get?.description).toBe(
      '- Every call counts `hits` +1.',
    );
  });

  it('gives each operation a unique id', () => {
    const ids = Object.values(paths(hidden[0] as SwaggerDocument)).flatMap((operations) =>
      Object.values(operations).map((operation) => operation.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('get_v1_words_word');
    expect(ids).toContain('get_proxy');
  });
});

describe('credentials and refusals', () => {
  const config = (input: Parameters<typeof parseConfig>[0]) => parseConfig(input);
  const documentFor = (mode: 'user_key' | 'app_id' | 'oauth', extra: Record<string, string> = {}) =>
    swaggerDocument({
      basePath: '',
      routes: [parseRoute('GET /v1/words/{word}', 'routes[0]')],
      config: config({ serviceId: 's1', credentialMode: mode, ...extra }),
      settings: { version: DEFAULT_DOCS_VERSION },
    });

  it('describes a user key as an apiKey in the configured header, required on every operation', () => {
    const document = documentFor('user_key', { credentialHeader: 'X-User-Key' });
    expect(document.securityDefinitions).toEqual({
      user_key: {
        type: 'apiKey',
        in: 'header',
        name: 'x-user-key',
        description: "The application's user key.",
      },
    });
    expect(document.security).toEqual([{ user_key: [] }]);
  });

  it('describes app_id mode as two apiKey definitions required together', () => {
    const document = documentFor('app_id', { appIdHeader: 'X-App-Id' });
    expect(document.securityDefinitions).toEqual({
      app_id: { type: 'apiKey', in: 'header', name: 'x-app-id', description: "The application's id." },
      app_key: { type: 'apiKey', in: 'header', name: 'app_key', description: 'One of the application keys.' },
    });
    expect(document.security).toEqual([{ app_id: [], app_key: [] }]);
  });

  it('describes oauth mode with the built-in issuer as an oauth2 application flow with its token URL', async () => {
    const document = documentFor('oauth', { oidcIssuer: 'https://api.example/prod/oauth-api' });
    await expectValidSwagger2(document);
    expect(document.securityDefinitions).toEqual({
      oauth2: {
        type: 'oauth2',
        flow: 'application',
        tokenUrl: 'https://api.example/prod/oauth-api/oauth/token',
        scopes: {},
        description: expect.stringContaining('Authorization: Bearer'),
      },
    });
    expect(document.security).toEqual([{ oauth2: [] }]);
  });

  it("describes an external issuer's tokens as a Bearer Authorization header, with no token URL of ours", async () => {
    const document = documentFor('oauth', {
      oidcIssuer: 'https://idp.example/realms/shop',
      oidcJwksUrl: 'https://idp.example/realms/shop/protocol/openid-connect/certs',
    });
    await expectValidSwagger2(document);
    expect(document.securityDefinitions).toEqual({
      bearer: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'Bearer followed by an access token of https://idp.example/realms/shop.',
      },
    });
    expect(document.security).toEqual([{ bearer: [] }]);
  });

  it('documents the 401, 403 and 500 bodies exactly as the gateway answers them', async () => {
    const document = documentFor('app_id');
    await expectValidSwagger2(document);
    const responses = document.responses as Record<
      string,
      { schema: unknown; examples: unknown; description: string }
    >;
    const unauthorized = JSON.parse(
      accessGatewayResponses(credentialPromptOf(config({ serviceId: 's1', credentialMode: 'app_id' })))[0]
        ?.template ?? '',
    );
    expect(responses.Unauthorized?.examples).toEqual({ 'application/json': unauthorized });
    expect(responses.AccessDenied?.examples).toMatchObject({
      'application/json': { message: 'Access denied', reason: 'limits_exceeded' },
    });
    expect(responses.AccessDenied?.schema).toMatchObject({
      properties: { reason: { enum: expect.arrayContaining(['limits_exceeded', 'no_mapping_rule']) } },
    });
    expect(responses.AccessDenied?.description).toContain('`application_not_active`');
    expect(responses.AccessCheckUnavailable?.examples).toEqual({
      'application/json': {
        message: 'The access check is unavailable; try again later',
        reason: 'authorizer_unavailable',
      },
    });
    expect(paths(document)['/v1/words/{word}']?.get?.responses).toEqual({
      '200': { description: "The backend's answer." },
      '401': { $ref: '#/responses/Unauthorized' },
      '403': { $ref: '#/responses/AccessDenied' },
      '500': { $ref: '#/responses/AccessCheckUnavailable' },
    });
  });

  it('documents an open OPTIONS route without credentials, refusals or metrics', async () => {
    const document = swaggerDocument({
      basePath: '',
      routes: ['GET /things', 'OPTIONS /things'].map((route, i) => parseRoute(route, `routes[${i}]`)),
      config: config({ serviceId: 's1' }),
      settings: { version: 'v1' },
    });
    await expectValidSwagger2(document);
    expect(paths(document)['/things']?.options).toEqual({
      operationId: 'options_things',
      summary: 'Open: no credential needed, not counted',
      parameters: [],
      responses: { '200': { description: "The backend's answer." } },
      security: [],
    });
  });
});

describe("docs settings and the provider's document", () => {
  it('defaults the version to v1 and the title to the service', () => {
    expect(parseDocsSettings('gateway.docs', undefined)).toEqual({ version: 'v1' });
    const document = swaggerDocument({
      basePath: '/prod',
      routes: [parseRoute('GET /', 'routes[0]')],
      config: parseConfig({ serviceId: '2555' }),
      settings: parseDocsSettings('gateway.docs', { version: '2.3' }),
    });
    expect(document.info).toMatchObject({ title: 'API of service 2555', version: '2.3' });
    expect(document.basePath).toBe('/prod');
  });

  it.each([
    [{ versoin: 'v2' }, 'gateway.docs.versoin is not a known setting'],
    [{ version: '' }, 'gateway.docs.version is required'],
    [{ merge: [] }, 'gateway.docs.merge must be a Swagger 2.0 object to merge in'],
    [{ merge: { swagger: '3.0' } }, 'gateway.docs.merge.swagger must be "2.0"'],
    ['yes', 'gateway.docs must be an object'],
  ])('refuses %j naming the setting', (value, message) => {
    expect(() => parseDocsSettings('gateway.docs', value)).toThrow(message);
  });

  it('merges objects key by key, parameters by name, and lets the provider replace anything else', () => {
    const base = {
      info: { title: 'T', version: 'v1' },
      paths: {
        '/a/{id}': {
          get: {
            summary: 'Counts hits',
            parameters: [
              { name: 'id', in: 'path', required: true, type: 'string' },
              { name: 'body', in: 'body', schema: {} },
            ],
            tags: ['one'],
          },
        },
      },
    };
    const overlay = {
      info: { description: 'D' },
      paths: {
        '/a/{id}': {
          get: {
            parameters: [
              { name: 'id', in: 'path', description: 'The id' },
              { name: 'q', in: 'query', type: 'string' },
            ],
            tags: ['two'],
          },
        },
      },
      definitions: { Thing: { type: 'object' } },
    };
    expect(deepMerge(base, overlay)).toEqual({
      info: { title: 'T', version: 'v1', description: 'D' },
      paths: {
        '/a/{id}': {
          get: {
            summary: 'Counts hits',
            parameters: [
              { name: 'id', in: 'path', required: true, type: 'string', description: 'The id' },
              { name: 'body', in: 'body', schema: {} },
              { name: 'q', in: 'query', type: 'string' },
            ],
            tags: ['two'],
          },
        },
      },
      definitions: { Thing: { type: 'object' } },
    });
  });

  it("ignores a __proto__ key of the provider's document", () => {
    const merged = deepMerge({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}, "b": 2}')) as Record<
      string,
      unknown
    >;
    expect(merged).toEqual({ a: 1, b: 2 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
