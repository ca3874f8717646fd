/**
 * The proxy configuration routes of the Account Management API (porta's
 * app/controllers/admin/api/services/proxy/configs_controller.rb, routed in config/routes.rb under
 * `namespace :proxy`, `resources :configs, param: :version, path: 'configs/:environment'`):
 * - `GET services/{id}/proxy/configs/{environment}/latest.json`: the newest version, 404 when none;
 * - `GET services/{id}/proxy/configs/{environment}/{version}.json`: one version, 404 when absent;
 * - `POST services/{id}/proxy/configs/{environment}/{version}/promote.json?to=production`: copies the
 *   version to `to` (201), 422 when `to` is no environment or already has that version.
 * An unknown service is 404 first; an environment other than `sandbox`, `staging` or `production` is
 * 400 `{"error": "invalid environment"}` (`ProxyConfig::InvalidEnvironmentError`). Answers are porta's
 * `ProxyConfigRepresenter`: `{"proxy_config": {id, version, environment, content}}`, content as JSON.
 */
import type { AdminContext } from './admin-context';
import { required } from './admin-context';
import { AdminApiError, JSON_HEADERS } from './admin-errors';
import type { Service } from './model';
import { type ProxyConfigVersion, type StoredEnvironment, storedEnvironment } from './proxy-configs';
import type { Answer } from './transactor';

function serviceOf(context: AdminContext, id: string): Service {
  const service = context.services.find((candidate) => candidate.id === id);
  if (service === undefined) throw AdminApiError.notFound();
  return service;
}

function environmentOf(name: string): StoredEnvironment {
  const environment = storedEnvironment(name);
  if (environment === undefined) {
    throw new AdminApiError(400, { kind: 'error', message: 'invalid environment' });
  }
  return environment;
}

function answerOf(config: ProxyConfigVersion | undefined, status = 200): Answer {
  if (config === undefined) throw AdminApiError.notFound();
  const { id, version, environment, content } = config;
  return {
    status,
    headers: JSON_HEADERS,
    body: JSON.stringify({ proxy_config: { id, version, environment, content: JSON.parse(content) } }),
  };
}

export function latestProxyConfig(context: AdminContext, [, serviceId, environment]: readonly string[]) {
  const service = serviceOf(context, serviceId as string);
  return answerOf(service.proxyConfigs.latest(environmentOf(environment as string)));
}

export function showProxyConfig(
  context: AdminContext,
  [, serviceId, environment, version]: readonly string[],
): Answer {
  const service = serviceOf(context, serviceId as string);
  return answerOf(service.proxyConfigs.find(environmentOf(environment as string), Number(version)));
}

export function promoteProxyConfig(
  context: AdminContext,
  [, serviceId, environment, version]: readonly string[],
): Answer {
  const service = serviceOf(context, serviceId as string);
  const config = service.proxyConfigs.find(environmentOf(environment as string), Number(version));
  if (config === undefined) throw AdminApiError.notFound();
  const promoted = service.proxyConfigs.promote(config, required(context.values, 'to'));
  if (!promoted.ok) throw AdminApiError.invalid({ [promoted.field]: [promoted.message] });
  return answerOf(promoted.config, 201);
}
