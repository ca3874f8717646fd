/**
 * Turns the platform's HTTP answers (status, headers, XML body) into typed outcomes. Pure: no I/O,
 * never throws. Messages are returned as the platform wrote them; the client redacts them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { XMLParser } from 'fast-xml-parser';
import { parsePlatformTime } from './encoding';
import type {
  AuthOutcome,
  AuthorizationStatus,
  DenialReason,
  InvalidCredentialCode,
  LimitHeaders,
  MetricHierarchy,
  Period,
  PlatformFailure,
  UsageReport,
} from './types';

export interface PlatformAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type Unavailable = Extract<PlatformFailure, { kind: 'unavailable' }>;
type Misconfigured = Extract<PlatformFailure, { kind: 'misconfigured' }>;

export const REJECTION_REASON_HEADER = '3scale-rejection-reason';
export const LIMIT_REMAINING_HEADER = '3scale-limit-remaining';
export const LIMIT_RESET_HEADER = '3scale-limit-reset';
export const LIMIT_MAX_VALUE_HEADER = '3scale-limit-max-value';

const INVALID_CREDENTIAL_CODES: ReadonlySet<string> = new Set<InvalidCredentialCode>([
  'user_key_invalid',
  'application_not_found',
  'application_key_invalid',
]);

const DENIAL_REASONS: ReadonlySet<string> = new Set<DenialReason>([
  'limits_exceeded',
  'application_not_active',
  'application_key_invalid',
  'service_not_active',
  'referrer_not_allowed',
]);

/** Reason texts as the platform writes them, for answers that lack the rejection-reason header. */
const REASON_TEXTS: readonly (readonly [RegExp, DenialReason])[] = [
  [/^usage limits are exceeded$/, 'limits_exceeded'],
  [/^application is not active$/, 'application_not_active'],
  [/^application key "[\s\S]*" is invalid$/, 'application_key_invalid'],
  [/^application key is missing$/, 'application_key_invalid'],
  [/^service is not active$/, 'service_not_active'],
  [/^referrer "[\s\S]*" is not allowed$/, 'referrer_not_allowed'],
];

const PERIODS: ReadonlySet<string> = new Set<Period>([
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'eternity',
]);

/** Statuses that say "try again later" rather than "this request is wrong". */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 429]);

type Xml = { readonly parser: XMLParser; readonly validate: (body: string) => unknown };
let xml: Xml | undefined;

/**
 * fast-xml-parser, loaded with the first platform answer: a cache hit never reads XML, so module init,
 * which every cold start pays, skips it (issue 23). A synchronous require keeps the readers synchronous.
 */
function xmlReader(): Xml {
  if (xml) return xml;
  const { XMLParser, XMLValidator } = require('fast-xml-parser') as typeof import('fast-xml-parser');
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    ignoreDeclaration: true,
    parseTagValue: false,
    parseAttributeValue: false,
    isArray: (name) => name === 'usage_report' || name === 'metric',
  });
  xml = { parser, validate: (body) => XMLValidator.validate(body) };
  return xml;
}

type XmlNode = Record<string, unknown>;

/** The XML document of a body, or undefined when the body is not well-formed XML. */
function parseXml(body: string): XmlNode | undefined {
  if (body.trim() === '') return undefined;
  const { parser, validate } = xmlReader();
  if (validate(body) !== true) return undefined;
  try {
    return parser.parse(body) as XmlNode;
  } catch {
    return undefined;
  }
}

const isNode = (value: unknown): value is XmlNode => typeof value === 'object' && value !== null;

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (isNode(value) && typeof value['#text'] === 'string') return value['#text'];
  return undefined;
}

function isUnavailableStatus(status: number): boolean {
  return status === 0 || status >= 499 || TRANSIENT_STATUSES.has(status);
}

function unavailableStatus(status: number): Unavailable {
  return { kind: 'unavailable', cause: 'status', status, message: `platform answered HTTP ${status}` };
}

function unexpectedAnswer(status: number, what: string): Misconfigured {
  return {
    kind: 'misconfigured',
    code: 'unexpected_answer',
    status,
    message: `platform answered HTTP ${status} with ${what}; check the platform URL`,
  };
}

/** `<error code="...">message</error>`; an error without a code becomes `unexpected_answer`. */
function platformError(node: unknown): { code: string; message: string } {
  if (!isNode(node)) return { code: '', message: typeof node === 'string' ? node : '' };
  const code = node['@_code'];
  return { code: typeof code === 'string' ? code : '', message: text(node) ?? '' };
}

function errorFailure(status: number, error: { code: string; message: string }): Misconfigured {
  const code = error.code === '' ? 'unexpected_answer' : error.code;
  return { kind: 'misconfigured', code, status, message: error.message || `platform error ${code}` };
}

class MalformedStatus extends Error {}

function integerOf(value: unknown, field: string): number {
  const raw = text(value);
  const number = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isSafeInteger(number)) throw new MalformedStatus(`${field} is not an integer`);
  return number;
}

function timeOf(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parsePlatformTime(text(value) ?? '');
  if (parsed === undefined) throw new MalformedStatus(`${field} is not a platform time`);
  return parsed;
}

function listOf(container: unknown, element: string): unknown[] {
  if (!isNode(container)) return [];
  const items = container[element];
  return Array.isArray(items) ? items : [];
}

function usageReportOf(node: unknown): UsageReport {
  if (!isNode(node)) throw new MalformedStatus('usage_report is empty');
  const metric = node['@_metric'];
  const period = node['@_period'];
  if (typeof metric !== 'string' || metric === '') throw new MalformedStatus('usage_report has no metric');
  if (typeof period !== 'string' || !PERIODS.has(period)) {
    throw new MalformedStatus(`usage_report has an unknown period`);
  }
  return {
    metric,
    period: period as Period,
    periodStart: timeOf(node.period_start, 'period_start'),
    periodEnd: timeOf(node.period_end, 'period_end'),
    maxValue: integerOf(node.max_value, 'max_value'),
    currentValue: integerOf(node.current_value, 'current_value'),
    exceeded: node['@_exceeded'] === 'true',
  };
}

function hierarchyOf(node: unknown): MetricHierarchy {
  const hierarchy: Record<string, string[]> = {};
  for (const metric of listOf(node, 'metric')) {
    if (!isNode(metric) || typeof metric['@_name'] !== 'string') {
      throw new MalformedStatus('hierarchy metric has no name');
    }
    const children = typeof metric['@_children'] === 'string' ? metric['@_children'] : '';
    hierarchy[metric['@_name']] = children.split(/\s+/).filter((child) => child !== '');
  }
  return hierarchy;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function headerInteger(headers: IncomingHttpHeaders, name: string): number | undefined {
  const value = header(headers, name)?.trim();
  if (value === undefined || !/^-?\d+$/.test(value)) return undefined;
  return Number(value);
}

export function limitHeadersOf(headers: IncomingHttpHeaders): LimitHeaders | undefined {
  const remaining = headerInteger(headers, LIMIT_REMAINING_HEADER);
  const reset = headerInteger(headers, LIMIT_RESET_HEADER);
  if (remaining === undefined || reset === undefined) return undefined;
  const maxValue = headerInteger(headers, LIMIT_MAX_VALUE_HEADER);
  return { remaining, reset, ...(maxValue !== undefined && { maxValue }) };
}

/** The denial reason: the rejection-reason header when it names one we know, else the reason text. */
export function denialReasonOf(
  headerValue: string | undefined,
  reasonText: string,
): DenialReason | undefined {
  const code = headerValue?.trim();
  if (code !== undefined && DENIAL_REASONS.has(code)) return code as DenialReason;
  return REASON_TEXTS.find(([pattern]) => pattern.test(reasonText.trim()))?.[1];
}

function statusOutcome(answer: PlatformAnswer, node: unknown): AuthOutcome {
  if (!isNode(node)) return unexpectedAnswer(answer.status, 'an empty status');
  const authorized = text(node.authorized);
  if (authorized !== 'true' && authorized !== 'false') {
    return unexpectedAnswer(answer.status, 'a status without authorized true or false');
  }
  let status: AuthorizationStatus;
  try {
    const plan = text(node.plan);
    const limitHeaders = limitHeadersOf(answer.headers);
    status = {
      ...(plan !== undefined && { plan }),
      usageReports: listOf(node.usage_reports, 'usage_report').map(usageReportOf),
      hierarchy: hierarchyOf(node.hierarchy),
      ...(limitHeaders && { limitHeaders }),
    };
  } catch (error) {
    if (error instanceof MalformedStatus)
      return unexpectedAnswer(answer.status, `a malformed status (${error.message})`);
    throw error;
  }
  if (authorized === 'true') return { kind: 'authorized', ...status };
  const reasonText = text(node.reason) ?? '';
  const reason = denialReasonOf(header(answer.headers, REJECTION_REASON_HEADER), reasonText);
  if (reason === undefined) {
    return {
      kind: 'misconfigured',
      code: 'unknown_denial_reason',
      status: answer.status,
      message: `platform denied with a reason this client does not know: ${reasonText}`,
    };
  }
  return { kind: 'denied', reason, reasonText, ...status };
}

/** The outcome of an authorize.xml or authrep.xml answer. */
export function authOutcomeOf(answer: PlatformAnswer): AuthOutcome {
  if (isUnavailableStatus(answer.status)) return unavailableStatus(answer.status);
  const document = parseXml(answer.body);
  if (document && 'error' in document) {
    const error = platformError(document.error);
    if (INVALID_CREDENTIAL_CODES.has(error.code)) {
      return {
        kind: 'invalid_credential',
        code: error.code as InvalidCredentialCode,
        message: error.message,
      };
    }
    return errorFailure(answer.status, error);
  }
  if (document && 'status' in document && (answer.status === 200 || answer.status === 409)) {
    return statusOutcome(answer, document.status);
  }
  return unexpectedAnswer(answer.status, document ? 'an XML body that is not a status' : 'no XML body');
}

/** The failure of a transactions.xml answer, or undefined when the platform accepted the report. */
export function reportFailureOf(answer: PlatformAnswer): PlatformFailure | undefined {
  if (answer.status === 202) return undefined;
  if (isUnavailableStatus(answer.status)) return unavailableStatus(answer.status);
  const document = parseXml(answer.body);
  if (document && 'error' in document) {
    return errorFailure(answer.status, platformError(document.error));
  }
  return unexpectedAnswer(
    answer.status,
    document ? 'an XML body that is not an answer to a report' : 'no XML body',
  );
}
