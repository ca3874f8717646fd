/**
 * Application Create, List, Read, Delete and Accept (porta's `Admin::Api::BuyersApplicationsController`).
 * An application created here is one of the service's applications at once, so its credentials
 * authorize at `authrep.xml` as soon as the answer is sent (porta syncs the backend in `after_commit`),
 * and a deleted one stops at once. On a plan with `approval_required` it starts `pending`, refused until
 * accepted (`Contract#accept_on_create`). Generated credentials are porta's: a user key of 32 hex digits
 * (`Cinstance#generate_key`), an application id of 8, and in app_id and OIDC services a first key
 * (`Cinstance#create_first_key`, with the service's "mandatory app key" on, porta's default).
 *
 * porta's "one application per plan" check (`validate_plan_is_unique!`) belongs to its developer portal,
 * not to this API, so it is not made here.
 */
import { randomBytes } from 'node:crypto';
import { accountOf } from './accounts-api';
import { type AdminContext, required, text } from './admin-context';
import { AdminApiError } from './admin-errors';
import { applicationAnswerXml, applicationEventXml, applicationsAnswerXml } from './admin-xml';
import { appKeyProblem, keysLimit } from './keys-api';
import { Application, type PlanInfo, type Service } from './model';
import type { ParamHash, ParamValue } from './params';
import type { Answer } from './transactor';

export interface AccountApplication {
  readonly service: Service;
  readonly application: Application;
}

/** porta's `USER_KEY_FORMAT`: word characters, `-` and `.`, or base64 without `/`; at most 256. */
const USER_KEY = /^(?:[\w\-.]+|(?:[A-Za-z0-9+]{4})*(?:[A-Za-z0-9+]{4}|[A-Za-z0-9+]{3}=|[A-Za-z0-9+]{2}==))$/;
const MAX_USER_KEY = 256;
/** porta's application id: printable ASCII, no spaces, 4 to 255 characters. */
const APPLICATION_ID = /^[\x21-\x7E]{4,255}$/;
const LIST_STATE = { live: 'active', suspended: 'suspended', pending: 'pending' } as const;

/** porta's user key validation message, undefined for a valid key. */
export function userKeyProblem(userKey: string): string | undefined {
  return userKey.length > MAX_USER_KEY || !USER_KEY.test(userKey) ? 'is invalid' : undefined;
}

export function generatedKey(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

/**
 * The application with this API id; one that belongs to another account is not found. Config
 * applications belong to no account: for them the `{account_id}` segment is taken as given.
 */
export function findAccountApplication(
  services: readonly Service[],
  accountId: string,
  id: string,
): AccountApplication {
  for (const service of services) {
    for (const application of service.applications.values()) {
      if (application.adminId !== id) continue;
      if (application.accountId !== undefined && application.accountId !== accountId) break;
      return { service, application };
    }
  }
  throw AdminApiError.notFound();
}

export function applicationsOfAccount(context: AdminContext, accountId: string): AccountApplication[] {
  return context.services.flatMap((service) =>
    [...service.applications.values()]
      .filter((application) => application.accountId === accountId)
      .map((application) => ({ service, application })),
  );
}

export interface PlanChoice {
  readonly service: Service;
  readonly plan: PlanInfo;
}

/**
 * The plan a parameter names (a plan's config name, which serves as its id), narrowed by `service_id`
 * when several services have a plan of that name; undefined when the parameter is not given, 404 when
 * no plan has that name.
 */
export function namedPlan(context: AdminContext, param: string): PlanChoice | undefined {
  const planId = text(context.values, param);
  if (planId === undefined) return undefined;
  const serviceId = text(context.values, 'service_id');
  const found = context.services.flatMap((service) => {
    const plan = service.planInfo.get(planId);
    return plan === undefined || (serviceId !== undefined && service.id !== serviceId)
      ? []
      : [{ service, plan }];
  });
  if (found.length === 0) throw AdminApiError.notFound();
  if (found.length > 1) {
    throw AdminApiError.invalid({
      [param]: [
        `names a plan of several services (${found.map((f) => f.service.id).join(', ')}): give service_id`,
      ],
    });
  }
  return found[0];
}

function keyValues(value: ParamValue | undefined): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value))
    return value.filter((entry): entry is string => typeof entry === 'string' && entry !== '');
  return [];
}

interface Credentials {
  readonly id: string;
  readonly userKey?: string;
  readonly appKeys: readonly string[];
}

/** The credentials given (`user_key`, `application_id`, `application_key`), checked, or generated ones. */
function credentials(service: Service, context: AdminContext, values: ParamHash): Credentials {
  const errors: Record<string, string[]> = {};
  if (service.authentication === 'user_key') {
    const userKey = text(values, 'user_key') ?? generatedKey();
    const problem = userKeyProblem(userKey);
    if (problem !== undefined) errors.user_key = [problem];
    else if (service.applicationsByUserKey.has(userKey)) errors.user_key = ['has already been taken'];
    if (Object.keys(errors).length > 0) throw AdminApiError.invalid(errors);
    return { id: context.caller.tenant.nextId(), userKey, appKeys: [] };
  }
  const id = text(values, 'application_id') ?? generatedKey(4);
  if (!APPLICATION_ID.test(id)) errors.application_id = ['is invalid'];
  else if (service.applications.has(id)) errors.application_id = ['has already been taken'];
  const given = [...new Set(keyValues(values.application_key))];
  const problems = given.flatMap((key) => appKeyProblem(key) ?? []);
  if (problems.length > 0) errors.base = problems;
  else if (given.length > keysLimit(service)) errors.base = ['Limit reached'];
  if (Object.keys(errors).length > 0) throw AdminApiError.invalid(errors);
  return { id, appKeys: given.length > 0 ? given : [generatedKey()] };
}

export interface NewApplication {
  readonly choice: PlanChoice;
  readonly accountId: string;
  readonly name: string;
  readonly description: string;
  /** Where the given credentials are read; an empty hash generates them all. */
  readonly credentials: ParamHash;
}

/** Creates the application in its service, where it authorizes at once, and sends its `created` webhook. */
export function addApplication(context: AdminContext, input: NewApplication): Application {
  const { service, plan } = input.choice;
  const { id, userKey, appKeys } = credentials(service, context, input.credentials);
  const application = new Application(id, userKey, new Set(appKeys), plan.name, 'active', []);
  application.state = plan.approvalRequired ? 'pending' : 'active';
  application.adminId = service.authentication === 'user_key' ? id : context.caller.tenant.nextId();
  application.accountId = input.accountId;
  application.name = input.name;
  application.description = input.description;
  application.createdAt = context.now;
  application.updatedAt = context.now;
  service.addApplication(application);
  context.notify('created', applicationEventXml('created', service, application));
  return application;
}

export function createApplication(context: AdminContext, [, accountId]: readonly string[]): Answer {
  const account = accountOf(context, accountId as string);
  const choice = namedPlan(context, 'plan_id');
  // porta's `accessible_application_plans.find(nil)` is a RecordNotFound too.
  if (choice === undefined) throw AdminApiError.notFound();
  const application = addApplication(context, {
    choice,
    accountId: account.id,
    name: required(context.values, 'name'),
    description: text(context.values, 'description') ?? '',
    credentials: context.values,
  });
  return { status: 201, headers: {}, body: applicationAnswerXml(choice.service, application) };
}

export function listApplications(context: AdminContext, [, accountId]: readonly string[]): Answer {
  accountOf(context, accountId as string);
  const state = text(context.values, 'state');
  const wanted = state === undefined ? undefined : (LIST_STATE[state as keyof typeof LIST_STATE] ?? 'none');
  const applications = applicationsOfAccount(context, accountId as string).filter(
    ({ application }) => wanted === undefined || application.state === wanted,
  );
  return { status: 200, headers: {}, body: applicationsAnswerXml(applications) };
}

export function readApplication(context: AdminContext, [, accountId, id]: readonly string[]): Answer {
  const { service, application } = findAccountApplication(
    context.services,
    accountId as string,
    id as string,
  );
  return { status: 200, headers: {}, body: applicationAnswerXml(service, application) };
}

/** Deletes the application; porta answers a DELETE with 200 and no body. */
export function deleteApplication(context: AdminContext, [, accountId, id]: readonly string[]): Answer {
  const { service, application } = findAccountApplication(
    context.services,
    accountId as string,
    id as string,
  );
  service.removeApplication(application);
  context.notify('deleted', applicationEventXml('deleted', service, application));
  return { status: 200, headers: {}, body: '' };
}

/** `pending` -> live (Contract's `accept` event); from any other state, 422. */
export function acceptApplication(context: AdminContext, [, accountId, id]: readonly string[]): Answer {
  const { service, application } = findAccountApplication(
    context.services,
    accountId as string,
    id as string,
  );
  if (application.state !== 'pending')
    throw AdminApiError.invalid({ state: ['cannot transition via "accept"'] });
  application.state = 'active';
  application.touch(context.now);
  context.notify('updated', applicationEventXml('updated', service, application));
  return { status: 200, headers: {}, body: applicationAnswerXml(service, application) };
}
