/** What `npm start` prints once the stack is up: the URLs, the consumer keys of the file, and curl commands. */
import { CREDENTIAL_SCHEMES } from '../lambdas/core/credentials';
import { resourceSample, ruleSample } from '../lambdas/docs/swagger';
import { WEBHOOK_PATH } from '../lambdas/webhooks/handler';
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
  readonly headers: readonly [string, string][];
  readonly label: string;
}

function consumers(definition: StackDefinition, gateway: LocalStack['gateways'][number]): Consumer[] {
  const service = definition.platform?.services.find((candidate) => candidate.id === gateway.serviceId);
  const { config } = gateway;
  const scheme = CREDENTIAL_SCHEMES[config.credentialMode];
  if (service === undefined) {
    return [{ headers: scheme.exampleHeaders(config), label: 'an application of your platform' }];
  }
  return service.applications.map((application) => ({
    headers: scheme.exampleHeaders(config, application),
    label: `application ${application.id}, plan ${application.plan}${application.state === 'active' ? '' : `, ${application.state}`}`,
  }));
}

function curl(method: string, url: string, headers: readonly [string, string][]): string {
  const headerFlags = headers.map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`).join(' ');
  return `curl -i ${method === 'GET' ? '' : `-X ${method} `}${headerFlags} ${shellQuote(url)}`;
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
    lines.push(
      `  webhooks: POST ${gateway.url}${WEBHOOK_PATH}?token=... (token generated at start` +
        `${gatewayDefinition.externalPlatform ? ')' : '; the local platform sends its webhooks there)'}`,
    );
    const samples = samplePaths(gatewayDefinition);
    for (const consumer of consumers(definition, gateway)) {
      lines.push(`  # ${consumer.label}`);
      for (const { method, path } of samples) {
        lines.push(`  ${curl(method, `${gateway.url}${path}`, consumer.headers)}`);
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
