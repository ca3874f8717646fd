import { describe, expect, it } from 'vitest';
import { unprotectedMethods } from '../../../contract/gateway-responses';
import { withAccessSecurity, withGatewayResponses } from '../../../lib/parts/openapi-security';

const scheme = {
  name: 'ApiAccessAuthorizer',
  identitySources: ['method.request.header.app_id', 'method.request.header.app_key'],
  authorizerUri: 'arn:aws:apigateway:eu-west-1:lambda:path/2015-03-31/functions/fn/invocations',
};
const swagger = {
  swagger: '2.0',
  info: { title: 'Pets', version: '1' },
  paths: {
    '/pets': {
      parameters: [{ name: 'q', in: 'query' }],
      get: { responses: {} },
      'x-amazon-apigateway-any-method': { responses: {} },
    },
    '/health': { get: { responses: {} } },
  },
};

describe('withAccessSecurity', () => {
  it('declares the scheme in a Swagger 2.0 document and requires it on every operation', () => {
    const secured = withAccessSecurity(swagger, scheme, unprotectedMethods());
    expect(secured.definition.securityDefinitions).toEqual({
      ApiAccessAuthorizer: {
        type: 'apiKey',
        name: 'app_id',
        in: 'header',
        'x-amazon-apigateway-authtype': 'custom',
        'x-amazon-apigateway-authorizer': {
          type: 'request',
          identitySource: 'method.request.header.app_id, method.request.header.app_key',
          authorizerUri: scheme.authorizerUri,
          authorizerResultTtlInSeconds: 0,
        },
      },
    });
    expect([...secured.protectedOperations].sort()).toEqual(['ANY /pets', 'GET /health', 'GET /pets']);
    const paths = secured.definition.paths as Record<string, Record<string, unknown>>;
    expect(paths['/pets']?.parameters).toEqual([{ name: 'q', in: 'query' }]);
    expect(paths['/pets']?.get).toEqual({ responses: {}, security: [{ ApiAccessAuthorizer: [] }] });
  });

  it('leaves listed operations as they are and says which entry opened them', () => {
    const secured = withAccessSecurity(swagger, scheme, unprotectedMethods(['GET /health']));
    expect(secured.openOperations).toEqual([{ operation: 'GET /health', entry: 'GET /health' }]);
    const paths = secured.definition.paths as Record<string, Record<string, unknown>>;
    expect(paths['/health']?.get).toEqual({ responses: {} });
  });

  it('never changes the document it is given', () => {
    const before = JSON.stringify(swagger);
    withAccessSecurity(swagger, scheme, unprotectedMethods());
    expect(JSON.stringify(swagger)).toBe(before);
  });

  it('accepts operations that already require this scheme, from the document or the operation', () => {
    const document = { ...swagger, security: [{ ApiAccessAuthorizer: [] }] };
    expect(withAccessSecurity(document, scheme, unprotectedMethods()).protectedOperations).toHaveLength(3);
  });

  it.each([
    ['an operation that requires no security', { '/pets': { get: { security: [] } } }, undefined],
    ['an operation with another scheme', { '/pets': { get: { security: [{ sigv4: [] }] } } }, undefined],
    ['a document-wide other scheme', { '/pets': { get: {} } }, [{ sigv4: [] }]],
  ])('refuses %s, naming the operation', (_, paths, security) => {
    expect(() =>
      withAccessSecurity({ openapi: '3.0.1', paths, security }, scheme, unprotectedMethods()),
    ).toThrow(/^GET \/pets already requires security .* list the method in unprotectedMethods/);
  });

  it('refuses a document that is not OpenAPI', () => {
    expect(() => withAccessSecurity({ paths: {} }, scheme, unprotectedMethods())).toThrow(
      /neither an OpenAPI 3 .* nor a Swagger 2.0/,
    );
  });
});

describe('withGatewayResponses', () => {
  it("adds the types the document does not define and keeps the document's own", () => {
    const document = {
      openapi: '3.0.1',
      'x-amazon-apigateway-gateway-responses': { UNAUTHORIZED: { statusCode: 401 } },
    };
    const result = withGatewayResponses(document, {
      UNAUTHORIZED: { statusCode: 401, responseTemplates: {} },
      ACCESS_DENIED: { statusCode: 403 },
    });
    expect(result['x-amazon-apigateway-gateway-responses']).toEqual({
      UNAUTHORIZED: { statusCode: 401 },
      ACCESS_DENIED: { statusCode: 403 },
    });
  });
});
