/**
 * 3scale's Account Management API (`/admin/api/...`, porta's `Admin::Api` controllers): the caller (a
 * token or the provider key, access-tokens.ts), the routes a developer portal calls (account-management.ts),
 * and here the changes to what the gateway enforces: suspend or resume an application, change its plan
 * or its user key, set a plan's limit; and find an application by its user key
 * (`GET applications/find.xml?user_key=`, optionally narrowed by `service_id`, 404 when no application
 * has the key, as porta's `Admin::Api::ApplicationsController#find`). Answers in the API's XML. Each
 * application change sends the webhook the real platform sends for it, unless the provider turned "Actions
 * in the admin portal also trigger webhooks" off; a limit change sends none (3scale has no such event).
 *
 * Config applications belong to no account: for them the `{account_id}` segment is taken as given.
 * Applications, plans and metrics are named by their config names, and a limit by its period, where the
 * real API uses ids.
 */
import type { IncomingMessage } from 'node:http';
import { PERIODS } from '../../core/budget/periods';
import type { Period } from '../../core/platform/types';
import { readBody } from '../http-server';
import { authorize, basicCredential, identify } from './access-tokens';
import { accountManagementRoute } from './account-management';
import { required, text } from './admin-context';
import { AdminApiError } from './admin-errors';
import { applicationAnswerXml, applicationEventXml } from './admin-xml';
import { findAccountApplication, userKeyProblem } from './applications-api';
import { MAX_LIMIT_VALUE } from './config';
import type { Application, PlatformModel, Service } from './model';
import { type ParamHash, parseUrlEncoded } from './params';
import type { Answer } from './transactor';
import type { WebhookAction } from './webhooks';
import { limitAnswerXml } from './xml';

export const ADMIN_PREFIX = '/admin/api/';
const MAX_ADMIN_BODY_BYTES = 64 * 1024;
const APPLICATION = /^accounts\/([^/]+)\/applications\/([^/]+?)(?:\/(suspend|resume|change_plan))?\.xml$/;
const FIND_APPLICATION = 'applications/find.xml';
const LIMIT = /^application_plans\/([^/]+)\/metrics\/([^/]+)\/limits\/([^/]+?)\.xml$/;

export type ApplicationChangeListener = (action: WebhookAction, eventXml: string) => void;

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
  throw AdminApiError.notFound();
}

/** What each application route does; returns the webhook action to send, if any, and the answer status. */
function changeApplication(
  service: Service,
  application: Application,
  route: { readonly method: 'PUT'; readonly action: string | undefined },
  values: ParamHash,
): { readonly status: number; readonly event?: WebhookAction } {
  const { method, action } = route;
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
    if (!service.plans.has(plan)) throw AdminApiError.notFound();
    if (plan === application.plan) return { status: 200 };
    application.plan = plan;
    return { status: 200, event: 'plan_changed' };
  }
  if (method === 'PUT' && action === undefined) {
    const userKey = text(values, 'user_key');
    if (userKey === undefined || userKey === application.userKey) return { status: 200 };
    if (service.authentication !== 'user_key')
      throw AdminApiError.invalid({ user_key: ['does not apply to this service'] });
    const problem = userKeyProblem(userKey);
    if (problem !== undefined) throw AdminApiError.invalid({ user_key: [problem] });
    try {
      service.changeUserKey(application, userKey);
    } catch {
      throw AdminApiError.invalid({ user_key: ['has already been taken'] });
    }
    return { status: 200, event: 'user_key_updated' };
  }
  throw AdminApiError.notFound();
}

function setLimit(
  services: readonly Service[],
  plan: string,
  metric: string,
  period: string,
  values: ParamHash,
) {
  const service = services.find((candidate) => candidate.plans.has(plan) && candidate.metrics.has(metric));
  if (service === undefined || !PERIODS.includes(period as Period)) throw AdminApiError.notFound();
  const value = Number(required(values, 'value'));
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_LIMIT_VALUE) {
    throw AdminApiError.invalid({ value: ['must be a non-negative integer'] });
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

/**
 * One Account Management API request under `/admin/api/`; `onChange` hears each change's webhook, unless
 * the provider turned "Actions in the admin portal also trigger webhooks" off.
 */
export async function adminEndpoint(
  model: PlatformModel,
  request: IncomingMessage,
  onChange: ApplicationChangeListener,
  now: () => number = Date.now,
): Promise<Answer> {
  const path = decodeURI((request.url ?? '').split('?', 1)[0] ?? '').slice(ADMIN_PREFIX.length);
  const method = request.method ?? 'GET';
  const format = path.endsWith('.json') ? 'json' : 'xml';
  const notify: ApplicationChangeListener = (action, xml) => {
    if (model.webhookProviderActions) onChange(action, xml);
  };
  try {
    const values = await paramsOf(request);
    const caller = identify(model, values, basicCredential(request.headers.authorization));
    const services = model.servicesOf(caller.tenant.providerKey);
    const routed = accountManagementRoute(
      { model, caller, services, values, notify, now: now() },
      method,
      path,
    );
    if (routed !== undefined) return routed;
    if (path === FIND_APPLICATION && method === 'GET') {
      authorize(caller, 'read');
      const { service, application } = findByUserKey(services, values);
      return { status: 200, headers: {}, body: applicationAnswerXml(service, application) };
    }
    const app = APPLICATION.exec(path);
    if (app !== null && method === 'PUT') {
      authorize(caller, 'write');
      const [, accountId, id, action] = app as unknown as [string, string, string, string | undefined];
      const { service, application } = findAccountApplication(services, accountId, id);
      const change = changeApplication(service, application, { method, action }, values);
      if (change.event !== undefined) {
        application.touch(now());
        notify(change.event, applicationEventXml(change.event, service, application));
      }
      return { status: change.status, headers: {}, body: applicationAnswerXml(service, application) };
    }
    const limit = LIMIT.exec(path);
    if (limit !== null && method === 'PUT') {
      authorize(caller, 'write');
      const [, plan, metric, period] = limit as unknown as [string, string, string, string];
      return { status: 200, headers: {}, body: setLimit(services, plan, metric, period, values) };
    }
    throw AdminApiError.notFound();
  } catch (error) {
    if (error instanceof AdminApiError) return error.answer(format);
    throw error;
  }
}
