/**
 * The Account Management API's XML, in the element order of porta's `to_xml` methods: `Cinstance`
 * (application), `ApplicationPlan`/`Plan#xml_builder` (plan), `Account`, `User`, `ApplicationKey`, and
 * `WebHook::Event` (a webhook's `<event>`). Fields the local platform does not model (billing, credit
 * card details, traffic dates, extra fields) are left out; plans and config applications are named by
 * their config names, which serve as their ids.
 */
import type { DeveloperAccount, DeveloperUser } from './accounts';
import type { Application, PlanInfo, Service } from './model';
import { DECLARATION, element } from './xml';

/** Rails' `Time#xmlschema` in UTC: whole seconds, `Z`. */
export function xmlTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const APPLICATION_STATE = { active: 'live', suspended: 'suspended', pending: 'pending' } as const;

function planBody(plan: PlanInfo, type: string, state: string): string {
  return (
    `${element('id', plan.name)}${element('name', plan.name)}<type>${type}</type>${element('state', state)}` +
    `<approval_required>${plan.approvalRequired}</approval_required><setup_fee>0.0</setup_fee>` +
    '<cost_per_month>0.0</cost_per_month><trial_period_days>0</trial_period_days>' +
    '<cancellation_period>0</cancellation_period>'
  );
}

/** An application plan: `custom` and `default` as attributes, its service last. */
export function planXml(service: Service, plan: PlanInfo): string {
  return (
    `<plan custom="false" default="${plan.default}">` +
    `${planBody(plan, 'application_plan', plan.published ? 'published' : 'hidden')}` +
    `${element('service_id', service.id)}</plan>`
  );
}

export function plansAnswerXml(plans: readonly { service: Service; plan: PlanInfo }[]): string {
  return `${DECLARATION}<plans>${plans.map(({ service, plan }) => planXml(service, plan)).join('')}</plans>`;
}

function planOf(service: Service, name: string): PlanInfo {
  return service.planInfo.get(name) ?? { name, published: false, approvalRequired: false, default: false };
}

/**
 * An application (with its dates when created through the API): `<user_key>` in user_key services; `<application_id>` and `<keys>` in app_id and
 * OIDC services (with `<redirect_url>` in OIDC ones); then its plan, name and description.
 */
export function applicationXml(service: Service, app: Application): string {
  const credential =
    service.authentication === 'user_key'
      ? element('user_key', app.userKey ?? '')
      : `${element('application_id', app.id)}${service.authentication === 'oidc' ? '<redirect_url></redirect_url>' : ''}` +
        `<keys>${[...app.appKeys].map((key) => element('key', key)).join('')}</keys>`;
  const account = app.accountId === undefined ? '' : element('user_account_id', app.accountId);
  const dates =
    app.createdAt === undefined
      ? ''
      : `${element('created_at', xmlTime(app.createdAt))}${element('updated_at', xmlTime(app.updatedAt ?? app.createdAt))}`;
  return (
    `<application>${element('id', app.adminId)}${dates}${element('state', APPLICATION_STATE[app.state])}${account}` +
    `${element('service_id', service.id)}${credential}${planXml(service, planOf(service, app.plan))}` +
    `${element('name', app.name)}${element('description', app.description)}</application>`
  );
}

export function applicationAnswerXml(service: Service, app: Application): string {
  return `${DECLARATION}${applicationXml(service, app)}`;
}

export function applicationsAnswerXml(
  apps: readonly { service: Service; application: Application }[],
): string {
  return `${DECLARATION}<applications>${apps.map(({ service, application }) => applicationXml(service, application)).join('')}</applications>`;
}

export function keysAnswerXml(keys: readonly string[]): string {
  return `${DECLARATION}<keys>${keys.map((key) => `<key>${element('value', key)}</key>`).join('')}</keys>`;
}

function userXml(user: DeveloperUser, accountId: string): string {
  return (
    `<user>${element('id', user.id)}${element('created_at', xmlTime(user.createdAt))}` +
    `${element('updated_at', xmlTime(user.updatedAt))}${element('account_id', accountId)}` +
    `${element('state', user.state)}<role>${user.role}</role>${element('username', user.username)}` +
    `${element('email', user.email)}</user>`
  );
}

export interface AccountXmlOptions {
  /** Whether the provider's (single, default) account plan requires approval. */
  readonly approvalRequired: boolean;
  /** `with_apps`: the account's applications, as sign-up answers. */
  readonly applications?: readonly { service: Service; application: Application }[];
}

/** An account with its account plan, its users and, for sign-up, its applications. */
export function accountXml(account: DeveloperAccount, options: AccountXmlOptions): string {
  const accountPlan = {
    name: 'Default',
    published: true,
    approvalRequired: options.approvalRequired,
    default: true,
  };
  const applications =
    options.applications === undefined
      ? ''
      : `<applications>${options.applications.map(({ service, application }) => applicationXml(service, application)).join('')}</applications>`;
  return (
    `<account>${element('id', account.id)}${element('created_at', xmlTime(account.createdAt))}` +
    `${element('updated_at', xmlTime(account.updatedAt))}${element('state', account.state)}` +
    `${element('org_name', account.orgName)}<monthly_billing_enabled>true</monthly_billing_enabled>` +
    '<monthly_charging_enabled>true</monthly_charging_enabled><credit_card_stored>false</credit_card_stored>' +
    `<plans><plan default="true">${planBody(accountPlan, 'account_plan', 'published')}</plan></plans>` +
    `<users>${account.users.map((user) => userXml(user, account.id)).join('')}</users>${applications}</account>`
  );
}

export function accountAnswerXml(account: DeveloperAccount, options: AccountXmlOptions): string {
  return `${DECLARATION}${accountXml(account, options)}`;
}

export interface Page {
  readonly current: number;
  readonly perPage: number;
  readonly totalEntries: number;
}

/** An account list with will_paginate's attributes on its root. */
export function accountsAnswerXml(accounts: readonly string[], page: Page): string {
  const totalPages = Math.max(1, Math.ceil(page.totalEntries / page.perPage));
  return (
    `${DECLARATION}<accounts current_page="${page.current}" per_page="${page.perPage}" ` +
    `total_entries="${page.totalEntries}" total_pages="${totalPages}">${accounts.join('')}</accounts>`
  );
}

export type EventType = 'application' | 'account' | 'user';

/** A webhook's body: `<event>` with the action, the object's type, and the object as the API shows it. */
export function eventXml(action: string, type: EventType, objectXml: string): string {
  return `${DECLARATION}<event>${element('action', action)}<type>${type}</type><object>${objectXml}</object></event>`;
}

export function applicationEventXml(action: string, service: Service, app: Application): string {
  return eventXml(action, 'application', applicationXml(service, app));
}

export function userEventXml(action: string, user: DeveloperUser, accountId: string): string {
  return eventXml(action, 'user', userXml(user, accountId));
}
