import { Cors } from 'aws-cdk-lib/aws-apigateway';
import { describe, expect, it } from 'vitest';
import {
  corsPreflightOptions,
  corsResponseHeaders,
  gatewayResponseCorsHeaders,
  parseCors,
} from '../../../../core/settings/cors';

const PORTAL = 'https://portal.example.com';
const DOCS = 'http://127.0.0.1:8080';

describe('parseCors', () => {
  it('takes no setting as no CORS, and "*" or exact origins as given', () => {
    expect(parseCors('cors', undefined)).toBeUndefined();
    expect(parseCors('cors', { allowOrigins: ['*'] })).toEqual({ allowOrigins: ['*'] });
    expect(parseCors('cors', { allowOrigins: [PORTAL, DOCS] })).toEqual({ allowOrigins: [PORTAL, DOCS] });
  });

  it.each([
    [{ allowOrigins: [] }, 'gateway.cors.allowOrigins must list at least one origin'],
    [
      { allowOrigins: 'https://portal.example.com' },
      'gateway.cors.allowOrigins must list at least one origin',
    ],
    [{ origins: ['*'] }, 'gateway.cors.origins is not a known setting'],
    [{ allowOrigins: ['*', PORTAL] }, 'gateway.cors.allowOrigins cannot mix "*" with specific origins'],
    [{ allowOrigins: ['portal.example.com'] }, 'gateway.cors.allowOrigins[0] must be "*" or an origin'],
    [{ allowOrigins: [`${PORTAL}/`] }, 'gateway.cors.allowOrigins[0] must be "*" or an origin'],
    [{ allowOrigins: [PORTAL, 'https://Portal.example.com'] }, 'gateway.cors.allowOrigins[1] must be'],
    [{ allowOrigins: ['ftp://files.example.com'] }, 'gateway.cors.allowOrigins[0] must be'],
    [{ allowOrigins: [''] }, 'gateway.cors.allowOrigins[0] is required'],
  ])('refuses %j naming the setting', (value, message) => {
    expect(() => parseCors('gateway.cors', value)).toThrow(message);
  });
});

describe('corsResponseHeaders (what a backend puts on its answers)', () => {
  it('adds nothing when CORS is off', () => {
    expect(corsResponseHeaders(undefined, { Origin: PORTAL })).toEqual({});
  });

  it('answers * to everyone when every origin is allowed', () => {
    expect(corsResponseHeaders({ allowOrigins: ['*'] }, { origin: PORTAL })).toEqual({
      'access-control-allow-origin': '*',
    });
    expect(corsResponseHeaders({ allowOrigins: ['*'] }, null)).toEqual({
      'access-control-allow-origin': '*',
    });
  });

  it('names the caller when it is an allowed origin, and always says the answer varies by origin', () => {
    const cors = { allowOrigins: [PORTAL, DOCS] };
    expect(corsResponseHeaders(cors, { ORIGIN: DOCS })).toEqual({
      'access-control-allow-origin': DOCS,
      vary: 'Origin',
    });
    expect(corsResponseHeaders(cors, { Origin: 'https://evil.example' })).toEqual({ vary: 'Origin' });
    expect(corsResponseHeaders(cors, {})).toEqual({ vary: 'Origin' });
  });
});

describe('corsPreflightOptions', () => {
  it("allows aws-cdk-lib's default headers plus the credential headers, once each, and all its methods", () => {
    const options = corsPreflightOptions({ allowOrigins: [PORTAL] }, ['app_id', 'app_key', 'x-api-key']);
    expect(options).toEqual({
      allowOrigins: [PORTAL],
      allowHeaders: [...Cors.DEFAULT_HEADERS, 'app_id', 'app_key'],
      allowMethods: Cors.ALL_METHODS,
    });
  });
});

describe('gatewayResponseCorsHeaders (static, as gateway responses allow)', () => {
  it('carries * or the first origin, and nothing without CORS', () => {
    expect(gatewayResponseCorsHeaders(undefined)).toEqual({});
    expect(gatewayResponseCorsHeaders({ allowOrigins: ['*'] })).toEqual({
      'access-control-allow-origin': '*',
    });
    expect(gatewayResponseCorsHeaders({ allowOrigins: [PORTAL, DOCS] })).toEqual({
      'access-control-allow-origin': PORTAL,
      vary: 'Origin',
    });
  });
});
