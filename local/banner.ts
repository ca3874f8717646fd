/** What `npm start` prints once the stack is up: the URLs, the consumer keys of the file, and curl commands. */

import { findRoute } from '../contract/routes';
import { throttleEntries, throttleText } from '../core/budget/throttles';
import { CREDENTIAL_SCHEMES, type CredentialExample, type ExampleApplication } from '../core/credentials';
import { SOAP_CREDENTIAL_SCHEMES } from '../core/soap/access-header';
import { SOAP_VERSIONS } from '../core/soap/envelope';
import { resourceSample, ruleSample } from '../lambdas/docs/swagger';
import { WEBHOOK_PATH } from '../lambdas/webhooks/handler';
import type { PluginApp } from './plugin-app';
import type { LocalRedis, LocalRedisKind } from './redis';
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
  /** Undefined: an application of a platform elsewhere (placeholders). */
  readonly application?: ExampleApplication;
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
    application,
  }));
}

/** The first operation a SOAP mapping rule names (`POST /<operation>`, no REST route serving it). */
export function soapOperation(gateway: GatewayDefinition): string | undefined {
  for (const rule of gateway.configInput.mappingRules ?? []) {
    const operation = /^\/([A-Za-z_][\w.-]*)\$?$/.exec(rule.pattern)?.[1];
    const post = rule.method === 'POST' || rule.method === 'ANY';
    if (operation && post && findRoute(gateway.routes, 'POST', `/${operation}`) === undefined)
      return operation;
  }
  return undefined;
}

/** A SOAP 1.1 call of the operation with the consumer's credential in the header, as one line. */
function soapCurl(url: string, namespace: string, operation: string, elements: [string, string][]): string {
  const header = [...elements, ['method', operation]]
    .map(([name, value]) => `<t:${name}>${value}</t:${name}>`)
    .join('');
  const envelope =
    `<soap:Envelope xmlns:soap="${SOAP_VERSIONS['1.1'].namespace}" xmlns:t="${namespace}">` +
    `<soap:Header>${header}</soap:Header>` +
    `<soap:Body><${operation} xmlns="urn:example"/></soap:Body></soap:Envelope>`;
  const headers: [string, string][] = [
    ['Content-Type', 'text/xml; charset=utf-8'],
    ['SOAPAction', `"urn:example:${operation}"`],
  ];
  return curl('POST', url, { headers, query: [] }, envelope);
}

function curl(
  method: string,
  url: string,
  example: Pick<CredentialExample, 'headers' | 'query'>,
  data?: string,
): string {
  const headerFlags = example.headers
    .map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`)
    .join(' ');
  const query = example.query.map(([name, value]) => `${name}=${value}`).join('&');
  const target = query === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${query}`;
  // A shell variable in the query (an access token) stays outside single quotes.
  const quoted = target.includes('$') ? `"${target}"` : shellQuote(target);
  const dataFlag = data === undefined ? '' : `--data ${shellQuote(data)} `;
  return `curl -i ${method === 'GET' ? '' : `-X ${method} `}${headerFlags === '' ? '' : `${headerFlags} `}${dataFlag}${quoted}`;
}

function nodesOf(redis: LocalRedis): string {
  const { settings } = redis;
  return [settings, ...(settings.seeds ?? [])].map((node) => `${node.host}:${node.port}`).join(', ');
}

const REDIS_LABELS: Readonly<Record<LocalRedisKind, (redis: LocalRedis) => string>> = {
  'in-memory': () => 'in-memory Redis stand-in',
  'redis-server': (redis) => `Redis (redis-server) on ${redis.host}:${redis.port}`,
  'redis-cluster': (redis) => `Redis cluster (redis-server, cluster mode) on ${nodesOf(redis)}`,
  external: (redis) => `Redis on ${redis.host}:${redis.port}`,
  'external-cluster': (redis) => `Redis cluster on ${nodesOf(redis)}`,
};

/** The Express app behind the plugin: its URL, then a call of each application of its service. */
function pluginAppLines(
  definition: StackDefinition,
  gateway: LocalStack['gateways'][number],
  gatewayDefinition: GatewayDefinition,
  app: PluginApp,
): string[] {
  const lines = [
    `Express app behind the plugin, service ${app.serviceId} (one budget with the first API) at ${app.url}`,
  ];
  const sample = samplePaths(gatewayDefinition)[0];
  if (sample === undefined) return lines;
  for (const consumer of consumers(definition, gateway)) {
    lines.push(
      `  # ${consumer.label}`,
      `  ${curl(sample.method, `${app.url}${sample.path}`, consumer.example)}`,
    );
  }
  return lines;
}

/** The lines `npm start` prints after its ready line. Demo keys are printed; the provider key never is. */
const API_LABELS: Readonly<Record<LocalStack['gateways'][number]['apiType'], string>> = {
  rest: 'REST API',
  http: 'HTTP API (payload 2.0, simple responses)',
};

/** The developer portal, and where its e-mails land (local only). */
function portalLine(portalUrl: string, stack: LocalStack): string {
  return `portal: ${portalUrl} (sign up, then read the link in the local mail sink at ${stack.mailSink?.url ?? '?'})`;
}

export function bannerLines(definition: StackDefinition, stack: LocalStack): string[] {
  const lines: string[] = [];
  const redis = REDIS_LABELS[stack.redis.kind](stack.redis);
  lines.push(
    `  ${stack.platform ? `local platform at ${stack.platform.url}` : 'no local platform (the file names one)'}, ${redis}`,
  );
  definition.gateways.forEach((gatewayDefinition, i) => {
    const gateway = stack.gateways[i];
    if (gateway === undefined) return;
    const { config } = gateway;
    lines.push('');
    lines.push(
      `${API_LABELS[gateway.apiType]} of service ${config.serviceId} (${config.credentialMode}) at ${gateway.url}` +
        `${gatewayDefinition.externalPlatform ? `, platform ${config.platformUrl}` : ''}`,
    );
    lines.push(
      `  routes: ${gatewayDefinition.routes.map((route) => `${route.method} ${route.resource}`).join(', ')}`,
    );
    lines.push(`  docs: ${gateway.docsUrl} (Swagger UI; the document is ${gateway.docsUrl}/swagger.json)`);
    if (gateway.portalUrl !== undefined) lines.push(`  ${portalLine(gateway.portalUrl, stack)}`);
    for (const throttle of throttleEntries(config.throttles)) {
      lines.push(
        `  throttle: plan ${throttle.plan}${throttle.metric === undefined ? '' : `, ${throttle.metric}`}: ${throttleText(throttle)} (beyond: 403 rate_limited)`,
      );
    }
    lines.push(
      `  webhooks: POST ${gateway.url}${WEBHOOK_PATH}?token=... (token generated at start` +
        `${gatewayDefinition.externalPlatform ? ')' : '; the local platform sends its webhooks there)'}`,
    );
    const samples = samplePaths(gatewayDefinition);
    const operation = soapOperation(gatewayDefinition);
    const soap = gatewayDefinition.soap;
    if (gateway.soapUrl !== undefined)
      lines.push(`  SOAP: POST ${gateway.soapUrl} (credential and method in the SOAP header)`);
    for (const consumer of consumers(definition, gateway)) {
      lines.push(`  # ${consumer.label}`);
      if (consumer.tokenRequest) {
        lines.push(`  ${consumer.tokenRequest}    # then ACCESS_TOKEN=<its access_token>`);
      }
      for (const { method, path } of samples) {
        lines.push(`  ${curl(method, `${gateway.url}${path}`, consumer.example)}`);
      }
      if (gateway.soapUrl !== undefined && soap !== undefined && operation !== undefined) {
        const elements = SOAP_CREDENTIAL_SCHEMES[config.credentialMode].exampleElements(consumer.application);
        lines.push(`  ${soapCurl(gateway.soapUrl, soap.settings.soapNamespace, operation, elements)}`);
      }
    }
  });
  if (stack.pluginApp && stack.gateways[0] && definition.gateways[0]) {
    lines.push('', ...pluginAppLines(definition, stack.gateways[0], definition.gateways[0], stack.pluginApp));
  }
  lines.push('');
  lines.push(
    `Usage reaches the platform one report window after a call (${stack.gateways
      .map((gateway) => `${gateway.config.reportWindowSeconds} s`)
      .filter((window, i, all) => all.indexOf(window) === i)
      .join(', ')}); Ctrl-C flushes pending usage and stops.`,
  );
  return lines;
}
