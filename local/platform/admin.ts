/**
 * The part of 3scale's Account Management API (`/admin/api/...`, porta's `Admin::Api` controllers) that
 * changes what the gateway enforces: suspend or resume an application, change its plan or its user key,
 * add or delete an app key, set a plan's limit; and find an application by its user key
 * (`GET applications/find.xml?user_key=`, optionally narrowed by `service_id`, 404 when no application
 * has the key, as porta's `Admin::Api::ApplicationsController#find`). Authenticated by the provider key,
 * as `provider_key` or as the `access_token` the real API takes (the local platform has no access
 * tokens: the provider key stands for one); answers in the API's XML. Each application change sends
 * the webhook the real platform sends for it; a limit change sends none (3scale has no such event).
 *
 * The local platform has no accounts: the `{account_id}` segment is taken as given. Applications, plans
 * and metrics are named by their config names, and a limit by its period, where the real API uses ids.
 */
import type { IncomingMessage } from 'node:http';
import { PERIODS } from '../../core/budget/periods';
import type { Period } from '../../core/platform/types';
import { readBody } from '../http-server';
import { MAX_LIMIT_VALUE } from './config';
import type { Application, PlatformModel, Service } from './model';
import { type ParamHash, parseUrlEncoded } from './params';
import type { Answer } from './transactor';
import type { WebhookAction } from './webhooks';
import {
  type ApplicationView,
  adminErrorXml,
  applicationAnswerXml,
  limitAnswerXml,
  webhookEventXml,
} from './xml';

export const ADMIN_PREFIX = '/admin/api/';
const MAX_ADMIN_BODY_BYTES = 64 * 1024;
const APPLICATION =
  /^accounts\/([^/]+)\/applications\/([^/]+?)(?:\/(suspend|resume|change_plan|keys)(?:\/([^/]+?))?)?\.xml$/;
const FIND_APPLICATION = 'applications/find.xml';
const LIMIT = /^application_plans\/([^/]+)\/metrics\/([^/]+)\/limits\/([^/]+?)\.xml$/;

export type ApplicationChangeListener = (action: WebhookAction, eventXml: string) => void;

class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function text(values: ParamHash, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function required(values: ParamHash, name: string): string {
  const value = text(values, name);
  if (value === undefined) throw new AdminError(422, `${name} is required`);
  return value;
}

export function applicationView(service: Service, application: Application): ApplicationView {
  return {
    id: application.id,
    serviceId: service.id,
    state: application.state,
    authentication: service.authentication,
    ...(application.userKey !== undefined && { userKey: application.userKey }),
    appKeys: [...application.appKeys],
    plan: application.plan,
  };
}

/** The services the provider key may manage; none answers 403 as the API does. */
function servicesOf(model: PlatformModel, values: ParamHash): Service[] {
  const providerKey = text(values, 'provider_key') ?? text(values, 'access_token');
  const services = [...model.services.values()].filter(
    (service) => providerKey !== undefined && service.providerKey === providerKey,
  );
  if (services.length === 0) throw new AdminError(403, 'Access denied');
  return services;
}

function findApplication(services: readonly Service[], id: string) {
  for (const service of services) {
    const application = service.applications.get(id);
    if (application !== undefined) return { service, application };
  }
  throw new AdminError(404, 'Not found');
}

/** The application holding a user key, in the given service or any the provider key manages. */
function findByUserKey(services: readonly Service[], values: ParamHash) {
  const userKey = required(values, 'user_key');
  const serviceId = text(values, 'service_id');
  for (const service of services) {
    if (service.authentication !== 'user_key' || (serviceId !== undefined && service.id !== serviceId))
      continue;
    for (const application of service.applications.values()) {
      if (application.userKey === userKey) return { service, application };
    }
  }
  throw new AdminError(404, 'Not found');
}

/** What each application route does; returns the webhook action to send, if any, and the answer status. */
function changeApplication(
  service: Service,
  application: Application,
  route: { readonly method: string; readonly action: string | undefined; readonly key: string | undefined },
  values: ParamHash,
): { readonly status: number; readonly event?: WebhookAction } {
  const { method, action, key } = route;
  if (method === 'PUT' && action === 'suspend') {
    if (application.state === 'suspended') return { status: 200 };
    application.state = 'suspended';
    return { status: 200, event: 'suspended' };
  }
  if (method === 'PUT' && action === 'resume') {
    if (application.state === 'active') return { status: 200 };
    application.state = 'active';
    return { status: 200, event: 'updated' };
  }
  if (method === 'PUT' && action === 'change_plan') {
    const plan = required(values, 'plan_id');
    if (!service.plans.has(plan)) throw new AdminError(404, 'Not found');
    if (plan === application.plan) return { status: 200 };
    application.plan = plan;
    return { status: 200, event: 'plan_changed' };
  }
  if (method === 'PUT' && action === undefined) {
    const userKey = text(values, 'user_key');
    if (userKey === undefined || userKey === application.userKey) return { status: 200 };
    if (service.authentication !== 'user_key')
      throw new AdminError(422, 'user_key does not apply to this service');
    try {
      service.changeUserKey(application, userKey);
    } catch (error) {
      throw new AdminError(422, (error as Error).message);
    }
    return { status: 200, event: 'user_key_updated' };
  }
  if (method === 'POST' && action === 'keys' && key === undefined) {
    if (service.authentication !== 'app_id')
      throw new AdminError(422, 'application keys do not apply to this service');
    const added = required(values, 'key');
    if (application.appKeys.has(added)) throw new AdminError(422, 'key has already been taken');
    application.appKeys.add(added);
    return { status: 201, event: 'key_created' };
  }
  if (method === 'DELETE' && action === 'keys' && key !== undefined) {
    if (!application.appKeys.delete(decodeURIComponent(key))) throw new AdminError(404, 'Not found');
    return { status: 200, event: 'key_deleted' };
  }
  throw new AdminError(404, 'Not found');
}

function setLimit(
  services: readonly Service[],
  plan: string,
  metric: string,
  period: string,
  values: ParamHash,
) {
  const service = services.find((candidate) => candidate.plans.has(plan) && candidate.metrics.has(metric));
  if (service === undefined || !PERIODS.includes(period as Period)) throw new AdminError(404, 'Not found');
  const value = Number(required(values, 'value'));
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_LIMIT_VALUE) {
    throw new AdminError(422, 'value must be a non-negative integer');
  }
  service.setLimit(plan, metric, period as Period, value);
  return limitAnswerXml({ plan, metric, period: period as Period, value });
}

async function paramsOf(request: IncomingMessage): Promise<ParamHash> {
  const url = request.url ?? '';
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const values = parseUrlEncoded(Buffer.from(query, 'latin1')).values;
  const body = await readBody(request, MAX_ADMIN_BODY_BYTES);
  return body.length === 0 ? values : parseUrlEncoded(body, values).values;
}

/** One Account Management API request under `/admin/api/`; `onChange` hears each application change. */
export async function adminEndpoint(
  model: PlatformModel,
  request: IncomingMessage,
  onChange: ApplicationChangeListener,
): Promise<Answer> {
  const path = decodeURI((request.url ?? '').split('?', 1)[0] ?? '').slice(ADMIN_PREFIX.length);
  const method = request.method ?? 'GET';
  try {
    const values = await paramsOf(request);
    const services = servicesOf(model, values);
    if (path === FIND_APPLICATION && method === 'GET') {
      const { service, application } = findByUserKey(services, values);
      return { status: 200, headers: {}, body: applicationAnswerXml(applicationView(service, application)) };
    }
    const app = APPLICATION.exec(path);
    if (app !== null) {
      const { service, application } = findApplication(services, app[2] as string);
      const change = changeApplication(service, application, { method, action: app[3], key: app[4] }, values);
      const view = applicationView(service, application);
      if (change.event !== undefined) onChange(change.event, webhookEventXml(change.event, view));
      return { status: change.status, headers: {}, body: applicationAnswerXml(view) };
    }
    const limit = LIMIT.exec(path);
    if (limit !== null && method === 'PUT') {
      const [, plan, metric, period] = limit as unknown as [string, string, string, string];
      return { status: 200, headers: {}, body: setLimit(services, plan, metric, period, values) };
    }
    throw new AdminError(404, 'Not found');
  } catch (error) {
    if (error instanceof AdminError) {
      return { status: error.status, headers: {}, body: adminErrorXml(error.message) };
    }
    throw error;
  }
}
