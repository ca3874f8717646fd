/**
 * The portal's client of the platform's Account Management API (porta's `Admin::Api` controllers, paths
 * and parameters as its ActiveDocs `account_management_api.json` gives them). It writes with an
 * `account_management` token of `rw` permission, sent as `access_token`; every call has a timeout. The
 * token never appears in a URL this client logs or returns. Answers are unions: a refusal is data.
 */
import {
  type Account,
  AdminAnswerError,
  type Application,
  accountApplicationsOf,
  accountOf,
  applicationOf,
  applicationsOf,
  errorsOf,
  keysOf,
  type Plan,
  plansOf,
} from './admin-xml';

/** The portal's answers wait this long for the platform at most. */
export const ADMIN_TIMEOUT_MS = 5000;
const MAX_ANSWER_BYTES = 1024 * 1024;

export type AdminFailure =
  /** The token may not do this: read-only, wrong scope, or a member's token where an admin's is needed. */
  | { readonly kind: 'forbidden'; readonly message: string }
  | { readonly kind: 'not_found'; readonly message: string }
  /** The platform refused the values (422): a duplicate, a limit, an invalid transition. */
  | { readonly kind: 'invalid'; readonly message: string }
  | { readonly kind: 'unavailable'; readonly message: string };

export type AdminResult<T> =
  | { readonly ok: true; readonly value: T }
  | ({ readonly ok: false } & AdminFailure);

export interface ProviderSettings {
  readonly accountApprovalRequired: boolean;
  readonly signupsEnabled: boolean;
}

export interface NewApplication {
  /**
   * The plan's service. porta's plan ids are unique and need no service; the local platform names plans
   * by their config names, which services may share, and takes `service_id` to tell them apart.
   */
  readonly serviceId: string;
  readonly planId: string;
  readonly name: string;
  readonly description?: string;
  readonly applicationKey?: string;
  /** In user_key services: the key to give the application (porta generates one when absent). */
  readonly userKey?: string;
}

export interface AdminClientOptions {
  /** The platform's admin URL, e.g. https://acme-admin.3scale.net. */
  readonly url: string;
  readonly accessToken: string;
  readonly timeoutMs?: number;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

function failureOf(status: number, body: string): AdminFailure {
  const message = errorsOf(body).join('; ') || `the platform answered ${status}`;
  if (status === 401 || status === 403) return { kind: 'forbidden', message };
  if (status === 404) return { kind: 'not_found', message };
  if (status === 422 || status === 409 || status === 400) return { kind: 'invalid', message };
  return { kind: 'unavailable', message };
}

export class AdminClient {
  private readonly base: URL;
  private readonly timeoutMs: number;

  constructor(private readonly options: AdminClientOptions) {
    this.base = new URL(options.url);
    this.timeoutMs = options.timeoutMs ?? ADMIN_TIMEOUT_MS;
  }

  private async call<T>(
    method: Method,
    path: string,
    params: Readonly<Record<string, string>>,
    read: (body: string) => T,
  ): Promise<AdminResult<T>> {
    const form = new URLSearchParams({ ...params, access_token: this.options.accessToken });
    const url = new URL(`/admin/api/${path}`, this.base);
    if (method === 'GET') url.search = form.toString();
    let status: number;
    let body: string;
    try {
      const response = await fetch(url, {
        method,
        signal: AbortSignal.timeout(this.timeoutMs),
        ...(method !== 'GET' && {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        }),
      });
      status = response.status;
      body = await response.text();
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      return {
        ok: false,
        kind: 'unavailable',
        message: timedOut
          ? `the platform did not answer within ${this.timeoutMs} ms`
          : `the platform could not be reached (${(error as Error).message})`,
      };
    }
    if (body.length > MAX_ANSWER_BYTES)
      return { ok: false, kind: 'unavailable', message: 'the answer is too large' };
    if (status < 200 || status > 299) return { ok: false, ...failureOf(status, body) };
    try {
      return { ok: true, value: read(body) };
    } catch (error) {
      if (error instanceof AdminAnswerError || error instanceof SyntaxError) {
        return {
          ok: false,
          kind: 'unavailable',
          message: `the platform's answer was unreadable: ${error.message}`,
        };
      }
      throw error;
    }
  }

  settings(): Promise<AdminResult<ProviderSettings>> {
    return this.call('GET', 'settings.json', {}, (body) => {
      const json = JSON.parse(body) as { settings?: Record<string, unknown> };
      const settings = json.settings ?? (json as Record<string, unknown>);
      return {
        accountApprovalRequired: settings.account_approval_required === true,
        signupsEnabled: settings.signups_enabled !== false,
      };
    });
  }

  /** porta's only sign-up call; answers the account and the applications it made on default plans. */
  signup(fields: {
    readonly orgName: string;
    readonly username: string;
    readonly email: string;
    readonly password: string;
  }): Promise<AdminResult<{ account: Account; applications: Application[] }>> {
    const { orgName, username, email, password } = fields;
    return this.call('POST', 'signup.xml', { org_name: orgName, username, email, password }, (body) => ({
      account: accountOf(body),
      applications: accountApplicationsOf(body),
    }));
  }

  findAccount(email: string): Promise<AdminResult<Account>> {
    return this.call('GET', 'accounts/find.xml', { email }, accountOf);
  }

  account(id: string): Promise<AdminResult<Account>> {
    return this.call('GET', `accounts/${encodeURIComponent(id)}.xml`, {}, accountOf);
  }

  plans(serviceId: string): Promise<AdminResult<Plan[]>> {
    return this.call('GET', `services/${encodeURIComponent(serviceId)}/application_plans.xml`, {}, plansOf);
  }

  applications(accountId: string): Promise<AdminResult<Application[]>> {
    return this.call('GET', `accounts/${encodeURIComponent(accountId)}/applications.xml`, {}, applicationsOf);
  }

  createApplication(accountId: string, app: NewApplication): Promise<AdminResult<Application>> {
    return this.call(
      'POST',
      `accounts/${encodeURIComponent(accountId)}/applications.xml`,
      {
        plan_id: app.planId,
        service_id: app.serviceId,
        name: app.name,
        ...(app.description !== undefined && { description: app.description }),
        ...(app.applicationKey !== undefined && { application_key: app.applicationKey }),
        ...(app.userKey !== undefined && { user_key: app.userKey }),
      },
      applicationOf,
    );
  }

  /** The service's application whose user key this is: porta's `applications/find.xml`, not_found for none. */
  findApplicationByUserKey(serviceId: string, userKey: string): Promise<AdminResult<Application>> {
    return this.call(
      'GET',
      'applications/find.xml',
      { user_key: userKey, service_id: serviceId },
      applicationOf,
    );
  }

  deleteApplication(accountId: string, applicationId: string): Promise<AdminResult<void>> {
    return this.call('DELETE', this.applicationPath(accountId, applicationId), {}, () => undefined);
  }

  /** Sets a new user_key: porta's admin API has no "regenerate"; the caller gives the value. */
  changeUserKey(
    accountId: string,
    applicationId: string,
    userKey: string,
  ): Promise<AdminResult<Application>> {
    return this.call(
      'PUT',
      this.applicationPath(accountId, applicationId),
      { user_key: userKey },
      applicationOf,
    );
  }

  keys(accountId: string, applicationId: string): Promise<AdminResult<string[]>> {
    return this.call('GET', `${this.applicationBase(accountId, applicationId)}/keys.xml`, {}, keysOf);
  }

  addKey(accountId: string, applicationId: string, key: string): Promise<AdminResult<void>> {
    return this.call(
      'POST',
      `${this.applicationBase(accountId, applicationId)}/keys.xml`,
      { key },
      () => undefined,
    );
  }

  deleteKey(accountId: string, applicationId: string, key: string): Promise<AdminResult<void>> {
    const path = `${this.applicationBase(accountId, applicationId)}/keys/${encodeURIComponent(key)}.xml`;
    return this.call('DELETE', path, {}, () => undefined);
  }

  private applicationBase(accountId: string, applicationId: string): string {
    return `accounts/${encodeURIComponent(accountId)}/applications/${encodeURIComponent(applicationId)}`;
  }

  private applicationPath(accountId: string, applicationId: string): string {
    return `${this.applicationBase(accountId, applicationId)}.xml`;
  }
}
