/**
 * The Service Management API's semantics, as the platform (apisonator) implements them: who the caller
 * is, which application, the validators in order (app key, referrer, application state, service state,
 * limits), usage recording, and the answer (status, headers, XML). Everything here is synchronous, so a
 * check and the increment that follows it cannot interleave with another request.
 */

import { PERIODS, periodWindow } from '../../core/budget/periods';
import type { Period } from '../../core/platform/types';
import type { Application, Limit, PlatformModel, Service, UsageDelta } from './model';
import { isParamHash, type ParamHash, type Params, type ParamValue } from './params';
import { errorXml, type StatusView, statusXml, type UsageReportView } from './xml';

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Empty for no body. */
  readonly body: string;
}

/** Options of the `3scale-options` header (and the `no_body` parameter). */
export interface Extensions {
  readonly noBody: boolean;
  readonly rejectionReasonHeader: boolean;
  readonly limitHeaders: boolean;
  readonly hierarchy: boolean;
}

/** An error answer: `<error code=...>` with its status, or an empty body when `code` is undefined. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code?: string,
    message = '',
  ) {
    super(message);
  }

  answer(extensions: Pick<Extensions, 'noBody'>): Answer {
    const body = this.code === undefined || extensions.noBody ? '' : errorXml(this.code, this.message);
    return { status: this.status, headers: {}, body };
  }
}

const MAX_TRANSACTIONS_PER_REPORT = 1000;
/** Reported timestamps must lie within now - 24 h .. now + 1 h (whole seconds). */
const REPORT_DEADLINE_PAST_S = 24 * 60 * 60;
const REPORT_DEADLINE_FUTURE_S = 60 * 60;
const SANE_USAGE_VALUE = /^\s*#?\d+\s*$/;
const MULTIPART = 'multipart/form-data';
const FORM = 'application/x-www-form-urlencoded';

const notValidData = () => new ApiError(422, 'not_valid_data', 'all data must be valid UTF8');

/** Ruby's String#strip: ASCII whitespace and NUL. */
function strip(text: string): string {
  return text.replace(/^[\0\t\n\v\f\r ]+|[\0\t\n\v\f\r ]+$/g, '');
}

function isBlank(value: ParamValue | undefined): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string' || Array.isArray(value)) return value.length === 0;
  return Object.keys(value).length === 0;
}

/** The platform's normalisation of the credential parameters: strings only, stripped, empty means absent. */
function credentialParam(values: ParamHash, name: string): string | undefined {
  const value = values[name];
  if (typeof value !== 'string') return undefined;
  const stripped = strip(value);
  return stripped === '' ? undefined : stripped;
}

export function parseExtensions(optionsHeader: Params | undefined, params: ParamHash): Extensions {
  const options = optionsHeader?.values ?? {};
  const flag = (name: string) => options[name] === '1';
  const noBody = options.no_body ?? params.no_body;
  return {
    noBody: typeof noBody === 'string' && noBody !== 'false' && noBody !== '0',
    rejectionReasonHeader: flag('rejection_reason_header'),
    limitHeaders: flag('limit_headers'),
    hierarchy: flag('hierarchy'),
  };
}

/** A caller authenticated by provider key (checked against the service later) or by service token. */
type Caller = { readonly providerKey: string } | { readonly service: Service };

function identifyCaller(model: PlatformModel, values: ParamHash): Caller {
  const providerKey = credentialParam(values, 'provider_key');
  if (providerKey !== undefined) return { providerKey };
  const token = values.service_token;
  const serviceId = credentialParam(values, 'service_id');
  if (typeof token !== 'string' || token === '') {
    throw new ApiError(
      403,
      'provider_key_or_service_token_required',
      'Provider key or service token are required',
    );
  }
  if (serviceId === undefined) throw new ApiError(422, 'service_id_missing', 'Service ID is missing');
  const service = model.services.get(serviceId);
  if (service?.serviceToken === token) return { service };
  throw new ApiError(
    403,
    'service_token_invalid',
    `service token "${token}" or service id "${serviceId}" is invalid`,
  );
}

function loadService(model: PlatformModel, values: ParamHash, caller: Caller): Service {
  if ('service' in caller) return caller.service;
  const { providerKey } = caller;
  const serviceId = credentialParam(values, 'service_id') ?? model.defaultServices.get(providerKey)?.id;
  if (serviceId === undefined) {
    throw new ApiError(
      403,
      'provider_key_invalid_or_service_missing',
      `provider key "${providerKey}" invalid and/or service ID missing`,
    );
  }
  const service = model.services.get(serviceId);
  if (service === undefined)
    throw new ApiError(403, 'service_id_invalid', `service id "${serviceId}" is invalid`);
  if (service.providerKey !== providerKey) {
    if (!model.defaultServices.has(providerKey)) {
      throw new ApiError(403, 'provider_key_invalid', `provider key "${providerKey}" is invalid`);
    }
    throw new ApiError(403, 'service_id_invalid', `service id "${serviceId}" is invalid`);
  }
  return service;
}

/** The application named by the request, in the service's authentication mode. */
function findApplication(service: Service, values: ParamHash): Application {
  const appId = credentialParam(values, 'app_id');
  const userKey = credentialParam(values, 'user_key');
  if (appId !== undefined && userKey !== undefined) {
    throw new ApiError(403, 'authentication_error', 'either app_id or user_key is allowed, not both');
  }
  if (service.authentication === 'user_key') {
    if (userKey === undefined) throw new ApiError(403, 'user_key_invalid', 'user key is missing');
    const application = service.applicationsByUserKey.get(userKey);
    if (application === undefined)
      throw new ApiError(403, 'user_key_invalid', `user key "${userKey}" is invalid`);
    return application;
  }
  if (appId === undefined) throw new ApiError(404, 'application_not_found', 'application id is missing');
  const application = service.applications.get(appId);
  if (application === undefined) {
    throw new ApiError(404, 'application_not_found', `application with id="${appId}" was not found`);
  }
  return application;
}

/**
 * Reads `usage[metric]=n` (or `#n`, which sets) and propagates each value to the metric's ancestors, so
 * `hits=1&get_word=1` adds 2 to hits. Throws usage_value_invalid or metric_invalid.
 */
function processUsage(service: Service, raw: ParamHash): Map<string, UsageDelta> {
  const own = new Map<string, UsageDelta>();
  for (const [rawName, value] of Object.entries(raw)) {
    const name = strip(rawName);
    if (typeof value !== 'string' || !SANE_USAGE_VALUE.test(value)) {
      const message =
        typeof value !== 'string' || strip(value) === ''
          ? `usage value for metric "${name}" can not be empty`
          : `usage value "${value}" for metric "${name}" is invalid`;
      throw new ApiError(403, 'usage_value_invalid', message);
    }
    if (!service.metrics.has(name)) throw new ApiError(404, 'metric_invalid', `metric "${name}" is invalid`);
    const digits = value.trim();
    const set = digits.startsWith('#');
    const amount = Number(set ? digits.slice(1) : digits);
    if (!Number.isSafeInteger(amount)) {
      throw new ApiError(
        403,
        'usage_value_invalid',
        `usage value "${value}" for metric "${name}" is invalid`,
      );
    }
    own.set(name, { set, value: amount });
  }
  const propagated = new Map(own);
  for (const [name, delta] of own) {
    for (const ancestor of service.ancestors(name)) {
      const before = propagated.get(ancestor);
      // As on the platform: a set child sets its parent, and adding to a set parent starts again from 0.
      const base = before === undefined || before.set ? 0 : before.value;
      propagated.set(ancestor, delta.set ? delta : { set: false, value: base + delta.value });
    }
  }
  return propagated;
}

function applyDelta(current: number, delta: UsageDelta | undefined): number {
  if (delta === undefined) return current;
  return delta.set ? delta.value : current + delta.value;
}

interface Denial {
  readonly code: string;
  readonly text: string;
}

function referrerMatches(filter: string, referrer: string): boolean {
  const pattern = filter.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&').replace(/\\\*/g, '.*');
  return new RegExp(`^${pattern}$`, 's').test(referrer);
}

function appKeyInvalid(appKey: string | undefined): Denial {
  return {
    code: 'application_key_invalid',
    text: appKey ? `application key "${appKey}" is invalid` : 'application key is missing',
  };
}

/**
 * The key validator of the service's authentication: an app_id service asks for one of the keys of an
 * application that has keys (Validators::Key); an OIDC service checks a key only when one is given, and
 * then it must be one of the application's (Validators::OauthKey: an empty key is refused).
 */
function checkKey(service: Service, application: Application, values: ParamHash): Denial | undefined {
  const appKey = typeof values.app_key === 'string' ? strip(values.app_key) : undefined;
  switch (service.authentication) {
    case 'user_key':
      return undefined;
    case 'app_id':
      if (application.appKeys.size === 0) return undefined;
      return appKey !== undefined && application.appKeys.has(appKey) ? undefined : appKeyInvalid(appKey);
    case 'oidc':
      if (values.app_key === undefined) return undefined;
      return appKey !== undefined && appKey !== '' && application.appKeys.has(appKey)
        ? undefined
        : appKeyInvalid(appKey);
  }
}

/** The validators before limits, in the platform's order; the first failure is the answer. */
function checkAccess(service: Service, application: Application, values: ParamHash): Denial | undefined {
  const keyDenial = checkKey(service, application, values);
  if (keyDenial !== undefined) return keyDenial;
  if (application.referrerFilters.length > 0) {
    const referrer = typeof values.referrer === 'string' ? values.referrer : undefined;
    const allowed =
      referrer !== undefined &&
      (referrer === '*' || application.referrerFilters.some((filter) => referrerMatches(filter, referrer)));
    if (!allowed) {
      return {
        code: 'referrer_not_allowed',
        text: referrer ? `referrer "${referrer}" is not allowed` : 'referrer is missing',
      };
    }
  }
  if (application.state !== 'active')
    return { code: 'application_not_active', text: 'application is not active' };
  if (service.state !== 'active') return { code: 'service_not_active', text: 'service is not active' };
  return undefined;
}

const LIMITS_EXCEEDED: Denial = { code: 'limits_exceeded', text: 'usage limits are exceeded' };

/** With usage, each limit on a used metric must hold after it; without, every limit must hold now. */
function withinLimits(
  limits: readonly Limit[],
  stored: readonly number[],
  usage: ReadonlyMap<string, UsageDelta> | undefined,
): boolean {
  return limits.every((limit, i) => {
    const current = stored[i] as number;
    if (usage === undefined) return current <= limit.max;
    const delta = usage.get(limit.metric);
    return delta === undefined || applyDelta(current, delta) <= limit.max;
  });
}

const PERIOD_RANK = new Map<Period, number>(PERIODS.map((period, i) => [period, i]));

interface LimitHeaderValues {
  readonly remaining: number;
  readonly reset: number;
  readonly maxValue?: number;
}

/**
 * The most constrained usage report among the used metrics and their ancestors (all reports without
 * usage): fewest identical calls left, the longer period on a tie. Unlimited (-1) only when none is bound.
 */
function limitHeaders(
  reports: readonly UsageReportView[],
  usage: ReadonlyMap<string, UsageDelta> | undefined,
  now: number,
): LimitHeaderValues {
  let best: { report: UsageReportView; calls: number } | undefined;
  for (const report of reports) {
    // The propagated usage holds exactly the used metrics and their ancestors.
    if (usage !== undefined && usage.size > 0 && !usage.has(report.metric)) continue;
    const left = Math.max(report.max - report.current, 0);
    const perCall = usage?.get(report.metric)?.value ?? 0;
    const calls = left === 0 ? 0 : perCall > 0 ? Math.floor(left / perCall) : Number.POSITIVE_INFINITY;
    const better =
      best === undefined ||
      calls < best.calls ||
      (calls === best.calls &&
        (PERIOD_RANK.get(report.period) as number) < (PERIOD_RANK.get(best.report.period) as number));
    if (better) best = { report, calls };
  }
  if (best === undefined || best.calls === Number.POSITIVE_INFINITY) return { remaining: -1, reset: -1 };
  const { end } = best.report.window;
  return {
    remaining: best.calls,
    reset: end === undefined ? -1 : Math.ceil((end - now) / 1000),
    maxValue: best.report.max,
  };
}

export type AuthKind = 'authorize' | 'authrep';

/** GET /transactions/authorize.xml and /transactions/authrep.xml. */
export function authorizeCall(
  model: PlatformModel,
  kind: AuthKind,
  params: Params,
  extensions: Extensions,
  now: number,
): Answer {
  if (!params.validUtf8) throw notValidData();
  const { values } = params;
  const caller = identifyCaller(model, values);
  const rawUsage = values.usage;
  if (rawUsage !== undefined && !isParamHash(rawUsage)) throw new ApiError(403);
  const service = loadService(model, values, caller);
  const application = findApplication(service, values);

  const limits = service.limits(application.plan);
  const stored = limits.map((limit) => application.counter(limit.metric, limit.period, now));
  let denial = checkAccess(service, application, values);
  let usage: Map<string, UsageDelta> | undefined;
  if (denial === undefined) {
    usage = rawUsage === undefined ? undefined : processUsage(service, rawUsage);
    if (!withinLimits(limits, stored, usage)) denial = LIMITS_EXCEEDED;
  }
  const recorded = kind === 'authrep' && denial === undefined ? usage : undefined;
  const reports: UsageReportView[] = limits.map((limit, i) => {
    const before = stored[i] as number;
    return {
      metric: limit.metric,
      period: limit.period,
      window: periodWindow(limit.period, now),
      max: limit.max,
      stored: before,
      current: applyDelta(before, recorded?.get(limit.metric)),
    };
  });
  if (recorded !== undefined) application.record(recorded, now);

  const headers: Record<string, string> = {};
  if (denial !== undefined && extensions.rejectionReasonHeader)
    headers['3scale-rejection-reason'] = denial.code;
  if (extensions.limitHeaders && (denial === undefined || denial === LIMITS_EXCEEDED)) {
    const values = limitHeaders(reports, usage, now);
    headers['3scale-limit-remaining'] = String(values.remaining);
    headers['3scale-limit-reset'] = String(values.reset);
    if (values.maxValue !== undefined) headers['3scale-limit-max-value'] = String(values.maxValue);
  }
  const status: StatusView = {
    authorized: denial === undefined,
    ...(denial !== undefined && { reasonText: denial.text }),
    plan: application.plan,
    reports,
    ...(extensions.hierarchy && { childrenOf: (metric: string) => service.metric(metric).children }),
  };
  return {
    status: denial === undefined ? 200 : 409,
    headers,
    body: extensions.noBody ? '' : statusXml(status),
  };
}

/** The media type of a Content-Type header, as Rack reads it. */
function mediaType(contentType: string | undefined): string | undefined {
  const type = contentType?.split(/\s*[;,]\s*/, 1)[0]?.toLowerCase();
  return type === '' ? undefined : type;
}

/** Whether a POST body of this content type is a form; throws content_type_invalid for any other type. */
export function checkReportContentType(contentType: string | undefined): 'multipart' | 'urlencoded' {
  const type = mediaType(contentType);
  if (type === MULTIPART) return 'multipart';
  if (type === undefined || type === FORM) return 'urlencoded';
  throw new ApiError(400, 'content_type_invalid', `invalid Content-Type: ${type}`);
}

/** An error the platform finds while it processes an accepted report; it drops the whole batch. */
export interface ReportError {
  readonly code: string;
  readonly message: string;
  /** Epoch ms when the report was received. */
  readonly at: number;
}

/** `YYYY-MM-DD[ HH:MM[:SS]][ offset]`, or Unix seconds; anything else (or nothing) means now. */
function parseTimestamp(value: ParamValue | undefined, now: number): number {
  if (typeof value !== 'string' || strip(value) === '') return now;
  const text = strip(value);
  if (/^\d+(\.\d+)?$/.test(text)) return Math.floor(Number(text) * 1000);
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})?$/i.exec(
      text,
    );
  if (match === null) return now;
  const [, year, month, day, hour, minute, second, zone] = match;
  const local = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour ?? 0),
    Number(minute ?? 0),
    Number(second ?? 0),
  );
  if (Number.isNaN(local)) return now;
  if (zone === undefined || /^(Z|UTC|GMT)$/i.test(zone)) return local;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return local - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
}

interface PendingTransaction {
  readonly application: Application;
  readonly usage: Map<string, UsageDelta>;
  readonly timestamp: number;
}

function pendingTransaction(service: Service, transaction: ParamHash, now: number): PendingTransaction {
  const application = findApplication(service, transaction);
  const rawUsage = transaction.usage;
  const usage = isParamHash(rawUsage) ? processUsage(service, rawUsage) : new Map<string, UsageDelta>();
  const timestamp = parseTimestamp(transaction.timestamp, now);
  const ahead = Math.floor(timestamp / 1000) - Math.floor(now / 1000);
  if (ahead < -REPORT_DEADLINE_PAST_S) {
    throw new ApiError(
      403,
      'transaction_timestamp_too_old',
      `reporting transactions older than ${REPORT_DEADLINE_PAST_S} seconds is not allowed`,
    );
  }
  if (ahead > REPORT_DEADLINE_FUTURE_S) {
    throw new ApiError(
      403,
      'transaction_timestamp_too_new',
      `reporting transactions more than ${REPORT_DEADLINE_FUTURE_S} seconds in the future is not allowed`,
    );
  }
  return { application, usage, timestamp };
}

/** A usage whose every value is "0" changes nothing; the platform drops such transactions. */
function onlyZeroUsage(transaction: ParamHash): boolean {
  const usage = transaction.usage;
  return isParamHash(usage) && Object.values(usage).every((value) => value === '0');
}

export interface ReportResult {
  readonly answer: Answer;
  /** Transactions accepted with the 202. */
  readonly accepted: number;
  /** The error that made the platform drop the accepted batch, if any. */
  readonly error?: ReportError;
}

/**
 * POST /transactions.xml. The platform answers 202 before it processes the batch and drops the whole
 * batch when one transaction is invalid (unknown application or metric, bad value or timestamp); that
 * processing happens here right away, before the answer, so usage is visible as soon as the 202 is.
 */
export function reportCall(model: PlatformModel, params: Params, now: number): ReportResult {
  const { values } = params;
  const caller = identifyCaller(model, values);
  if (!params.validUtf8) throw notValidData();
  const transactions = values.transactions;
  if (isBlank(transactions))
    throw new ApiError(400, 'transactions_is_blank', 'transactions parameter is blank');
  if (!isParamHash(transactions)) {
    throw new ApiError(400, 'transactions_format_invalid', 'transactions format is invalid');
  }
  const all = Object.values(transactions);
  if (all.some((transaction) => transaction === null)) {
    throw new ApiError(400, 'transactions_has_nil_transaction', 'transactions has a nil transaction');
  }
  if (
    !all.every(
      (transaction) =>
        isParamHash(transaction) && (transaction.usage === undefined || isParamHash(transaction.usage)),
    )
  ) {
    throw new ApiError(400, 'transactions_format_invalid', 'transactions format is invalid');
  }
  if (all.length > MAX_TRANSACTIONS_PER_REPORT) {
    throw new ApiError(
      400,
      'bad_request',
      `a report may carry at most ${MAX_TRANSACTIONS_PER_REPORT} transactions (got ${all.length})`,
    );
  }
  const service = loadService(model, values, caller);
  const answer: Answer = { status: 202, headers: {}, body: '' };
  const batch = (all as ParamHash[]).filter((transaction) => !onlyZeroUsage(transaction));
  let pending: PendingTransaction[];
  try {
    pending = batch.map((transaction) => pendingTransaction(service, transaction, now));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return {
      answer,
      accepted: all.length,
      error: { code: error.code ?? 'bad_request', message: error.message, at: now },
    };
  }
  for (const transaction of pending) transaction.application.record(transaction.usage, transaction.timestamp);
  return { answer, accepted: all.length };
}
