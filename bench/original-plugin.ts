/**
 * The ORIGINAL design of a code plugin, as 3scale's Node.js plugin (3scale_ws_api_for_nodejs) makes its
 * calls: one synchronous `authrep` per request (GET /transactions/authrep.xml, which authorizes and reports
 * the call at once), no cache, the request waiting for the answer. Rebuilt as Express middleware on the
 * project's own ports, so the difference measured is the design, not the plumbing: the credential is read
 * and the mapping rules applied as the plugin does, and the call goes through the project's platform
 * client (its keep-alive agent and XML reader).
 */
import type { RequestHandler } from 'express';
import { extractCredential } from '../core/credentials';
import { compileMappingRules } from '../core/decision/mapping';
import { type GatewayRequest, type ParameterValues, parsedQueryString } from '../core/decision/request';
import type { PlatformPort } from '../core/platform/types';
import type { AccessConfig } from '../core/settings/config';

export interface OriginalPluginDeps {
  readonly config: AccessConfig;
  readonly platform: PlatformPort;
}

/** Every value of each header, as Node hands them over. */
function headersOf(raw: Readonly<Record<string, string | string[] | undefined>>): ParameterValues {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value : [value];
  }
  return headers;
}

function gatewayRequestOf(method: string, url: string, headers: ParameterValues): GatewayRequest {
  const queryAt = url.indexOf('?');
  return {
    method,
    path: queryAt < 0 ? url : url.slice(0, queryAt),
    query: queryAt < 0 ? {} : parsedQueryString(url.slice(queryAt + 1)),
    headers,
  };
}

/** The plugin's status for each outcome of the authrep: its answers are the HTTP ones, not a policy. */
const STATUS_OF = { denied: 403, invalid_credential: 403, misconfigured: 500, unavailable: 503 } as const;

export function originalPluginMiddleware(deps: OriginalPluginDeps): RequestHandler {
  const mapper = compileMappingRules(deps.config.mappingRules);
  return (request, response, next) => {
    const gatewayRequest = gatewayRequestOf(request.method, request.url, headersOf(request.headers));
    const decide = async () => {
      const extraction = await extractCredential(deps.config, gatewayRequest);
      if (!extraction.ok) return 401;
      const usage = mapper.usageOf(gatewayRequest);
      if (usage === undefined) return 403;
      const outcome = await deps.platform.authrep(extraction.credential, usage);
      return outcome.kind === 'authorized' ? undefined : STATUS_OF[outcome.kind];
    };
    decide().then(
      (status) => (status === undefined ? next() : response.status(status).end()),
      (error: unknown) => next(error),
    );
  };
}
