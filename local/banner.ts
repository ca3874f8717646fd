/** What `npm start` prints once the stack is up: the URLs, the consumer keys of the file, and curl commands. */
import { CREDENTIAL_SCHEMES, type CredentialExample } from '../lambdas/core/credentials';
import { resourceSample, ruleSample } from '../lambdas/docs/swagger';
import { findRoute } from './routes';
import type { LocalStack } from './stack';
import type { GatewayDefinition, StackDefinition } from './stack-file';

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A concrete path for the first mapping rule a route serves, else for the route itself. */
function samplePaths(gateway: GatewayDefinition): { method: string; path: string }[] {
  const fromRules = (gateway.configInput.mappingRules ?? [])
    .map((rule) => ({
      method: rule.method === 'ANY' ? 'GET' : rule.method,
      path: ruleSample(rule.pattern).path,
    }))
    .filter((sample) => findRoute(gateway.routes, sample.method, sample.path) !== undefined);
  const samples =
    fromRules.length > 0
      ? fromRules
      : gateway.routes.map((route) => ({
          method: route.method === 'ANY' ? 'GET' : route.method,
          path: resourceSample(route.resource),
        }));
  const seen = new Set<string>();
  return samples.filter(
    ({ method, path }) => !seen.has(`${method} ${path}`) && seen.add(`${method} ${path}`),
  );
}

interface Consumer {
  readonly example: CredentialExample;
  readonly label: string;
  /** In oauth mode, the token request that comes first (client id and secret in the query string). */
  readonly tokenRequest?: string;
}

/** The specification's token request: client credentials in the query string of POST /oauth/token. */
function tokenRequest(url: string, clientId: string, clientSecret: string): string {
  const query = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  return `curl -i -X POST ${shellQuote(`${url}/oauth/token?${query}`)}`;
}

function consumers(definition: StackDefinition, gateway: LocalStack['gateways'][number]): Consumer[] {
  const service = definition.platform?.services.find((candidate) => candidate.id === gateway.serviceId);
  const { config } = gateway;
  const scheme = CREDENTIAL_SCHEMES[config.credentialMode];
  if (service === undefined) {
    return [{ example: scheme.example(config), label: 'an application of your platform' }];
  }
  return service.applications.map((application) => ({
    example: scheme.example(config, application),
    ...(config.credentialMode === 'oauth' &&
      application.appKeys[0] !== undefined && {
        tokenRequest: tokenRequest(gateway.url, application.id, application.appKeys[0]),
      }),
    label: `application ${application.id}, plan ${application.plan}${application.state === 'active' ? '' : `, ${application.state}`}`,
  }));
}

function curl(method: string, url: string, example: CredentialExample): string {
  const headerFlags = example.headers
    .map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`)
    .join(' ');
  const query = example.query.map(([name, value]) => `${name}=${value}`).join('&');
  const target = query === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${query}`;
  // A shell variable in the query (an access token) stays outside single quotes.
  const quoted = target.includes('$') ? `"${target}"` : shellQuote(target);
  return `curl -i ${method === 'GET' ? '' : `-X ${method} `}${headerFlags === '' ? '' : `${headerFlags} `}${quoted}`;
}

/** The lines `npm start` prints after its ready line. Demo keys are printed; the provider key never is. */
export function bannerLines(definition: StackDefinition, stack: LocalStack): string[] {
  const lines: string[] = [];
  const redis =
    stack.redis.kind === 'in-memory'
      ? 'in-memory Redis stand-in'
      : `Redis ${stack.redis.kind === 'redis-server' ? '(redis-server) ' : ''}on ${stack.redis.host}:${stack.redis.port}`;
  lines.push(
    `  ${stack.platform ? `local platform at ${stack.platform.url}` : 'no local platform (the file names one)'}, ${redis}`,
  );
  definition.gateways.forEach((gatewayDefinition, i) => {
    const gateway = stack.gateways[i];
    if (gateway === undefined) return;
    const { config } = gateway;
    lines.push('');
    lines.push(
      `API of service ${config.serviceId} (${config.credentialMode}) at ${gateway.url}` +
        `${gatewayDefinition.externalPlatform ? `, platform ${config.platformUrl}` : ''}`,
    );
    lines.push(
      `  routes: ${gatewayDefinition.routes.map((route) => `${route.method} ${route.resource}`).join(', ')}`,
    );
    lines.push(`  docs: ${gateway.docsUrl} (Swagger UI; the document is ${gateway.docsUrl}/swagger.json)`);
    const samples = samplePaths(gatewayDefinition);
    for (const consumer of consumers(definition, gateway)) {
      lines.push(`  # ${consumer.label}`);
      if (consumer.tokenRequest) {
        lines.push(`  ${consumer.tokenRequest}    # then ACCESS_TOKEN=<its access_token>`);
      }
      for (const { method, path } of samples) {
        lines.push(`  ${curl(method, `${gateway.url}${path}`, consumer.example)}`);
      }
    }
  });
  lines.push('');
  lines.push(
    `Usage reaches the platform one report window after a call (${stack.gateways
      .map((gateway) => `${gateway.config.reportWindowSeconds} s`)
      .filter((window, i, all) => all.indexOf(window) === i)
      .join(', ')}); Ctrl-C flushes pending usage and stops.`,
  );
  return lines;
}
