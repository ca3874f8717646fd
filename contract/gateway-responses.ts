/**
 * What a protected API does around the access authorizer: which methods it guards, and the JSON answers API
 * Gateway gives when the authorizer refuses a call or fails. Plain data with no aws-cdk-lib import, so the
 * local gateway serves exactly what a deployed API serves.
 */

import { INVALID_CREDENTIAL } from './authorizer-context';
import { ConfigError } from './config-error';

export type AccessGatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR';

export interface AccessGatewayResponse {
  readonly type: AccessGatewayResponseType;
  readonly statusCode: number;
  /** Body template; API Gateway fills `$context.authorizer.reason` from the Deny's context. */
  readonly template: string;
  /** Static response headers (raw values; a gateway response maps only static or request values). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * What a 401 tells the consumer about the credential: how to send it ("send your key in the apikey
 * header"), and the `WWW-Authenticate` challenge when the scheme's standard defines one (RFC 6750).
 * The credential scheme makes it (core/credentials `credentialPromptOf`).
 */
export interface CredentialPrompt {
  readonly hint: string;
  readonly challenge?: string;
}

/** What a protected API leaves open unless told otherwise: CORS preflights, which carry no credential. */
export const DEFAULT_UNPROTECTED_METHODS: readonly string[] = ['OPTIONS'];

const UNPROTECTED_ENTRY = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|ANY)(?: (\/\S*))?$/;

/** The methods a protected API leaves open, as the provider listed them. */
export interface UnprotectedMethods {
  /** The entries as given, for example `OPTIONS` (every preflight) or `GET /health` (one method). */
  readonly entries: readonly string[];
  /** The entry that leaves this method open, or undefined when it must be protected. */
  entryFor(httpMethod: string, resourcePath?: string): string | undefined;
}

/**
 * Reads `unprotectedMethods` entries: an HTTP method (or ANY) alone leaves every method of that verb open;
 * followed by a resource path (`GET /health`, `ANY /public/{proxy+}`) it leaves exactly that method open.
 */
export function unprotectedMethods(
  entries: readonly string[] = DEFAULT_UNPROTECTED_METHODS,
  setting = 'unprotectedMethods',
): UnprotectedMethods {
  const parsed = entries.map((entry, i) => {
    const match = UNPROTECTED_ENTRY.exec(entry);
    if (!match) {
      throw new ConfigError(
        `${setting}[${i}]`,
        `must be an HTTP method or ANY, optionally followed by a space and a resource path such as GET /health (got ${JSON.stringify(entry)})`,
      );
    }
    return { entry, httpMethod: match[1] as string, path: match[2] };
  });
  return {
    entries,
    entryFor(httpMethod, resourcePath) {
      const method = httpMethod.toUpperCase();
      return parsed.find(
        (candidate) =>
          candidate.httpMethod === method &&
          (candidate.path === undefined || candidate.path === resourcePath),
      )?.entry;
    },
  };
}

const DEFAULT_OPEN = unprotectedMethods();

/** Every method but OPTIONS (the default rule the local gateway serves). */
export function isProtectedMethod(httpMethod: string): boolean {
  return DEFAULT_OPEN.entryFor(httpMethod) === undefined;
}

const UNAVAILABLE = JSON.stringify({
  message: 'The access check is unavailable; try again later',
  reason: 'authorizer_unavailable',
});

export function accessGatewayResponses(prompt: CredentialPrompt): readonly AccessGatewayResponse[] {
  const { hint, challenge } = prompt;
  return [
    {
      type: 'UNAUTHORIZED',
      statusCode: 401,
      template: JSON.stringify({
        message: `Missing or invalid credential: ${hint}`,
        reason: INVALID_CREDENTIAL,
      }),
      ...(challenge !== undefined && { headers: { 'WWW-Authenticate': challenge } }),
    },
    {
      type: 'ACCESS_DENIED',
      statusCode: 403,
      // Templates are not run by VTL: values are substituted, empty when the Deny's context lacks them.
      template:
        '{"message":"Access denied","reason":"$context.authorizer.reason","metric":"$context.authorizer.limitMetric","period":"$context.authorizer.limitPeriod","max":"$context.authorizer.limit","reset":"$context.authorizer.reset"}',
    },
    { type: 'AUTHORIZER_FAILURE', statusCode: 500, template: UNAVAILABLE },
    { type: 'AUTHORIZER_CONFIGURATION_ERROR', statusCode: 500, template: UNAVAILABLE },
  ];
}
