import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  authOutcomeOf,
  denialReasonOf,
  limitHeadersOf,
  reportFailureOf,
} from '../../../../core/platform/answers';
import type { DenialReason } from '../../../../core/platform/types';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const answer = (status: number, body: string, headers: IncomingHttpHeaders = {}) => ({
  status,
  body,
  headers,
});

const errorBody = (code: string, message: string) =>
  `${XML_DECLARATION}<error code="${code}">${message}</error>`;

const dayReport =
  '<usage_report metric="hits" period="day" exceeded="true">' +
  '<period_start>2010-05-15 00:00:00 +0000</period_start><period_end>2010-05-16 00:00:00 +0000</period_end>' +
  '<max_value>100</max_value><current_value>101</current_value></usage_report>';

const eternityReport =
  '<usage_report metric="post_word" period="eternity">' +
  '<max_value>0</max_value><current_value>0</current_value></usage_report>';

const statusBody = (inner: string) => `${XML_DECLARATION}<status>${inner}</status>`;

const denial = (reasonText: string) =>
  statusBody(`<authorized>false</authorized><reason>${reasonText}</reason><plan>Basic</plan>`);

describe('authorized answers', () => {
  it('reads plan, periodic and eternity usage reports, hierarchy and limit headers', () => {
    const body = statusBody(
      '<authorized>true</authorized><plan>Basic</plan>' +
        `<usage_reports>${dayReport}${eternityReport}</usage_reports>` +
        '<hierarchy><metric name="hits" children="get_word post_word"/><metric name="get_word" children=""/></hierarchy>',
    );
    const outcome = authOutcomeOf(
      answer(200, body, {
        '3scale-limit-remaining': '7',
        '3scale-limit-reset': '3600',
        '3scale-limit-max-value': '100',
      }),
    );
    expect(outcome).toEqual({
      kind: 'authorized',
      plan: 'Basic',
      usageReports: [
        {
          metric: 'hits',
          period: 'day',
          periodStart: Date.UTC(2010, 4, 15),
          periodEnd: Date.UTC(2010, 4, 16),
          maxValue: 100,
          currentValue: 101,
          exceeded: true,
        },
        {
          metric: 'post_word',
          period: 'eternity',
          periodStart: undefined,
          periodEnd: undefined,
          maxValue: 0,
          currentValue: 0,
          exceeded: false,
        },
      ],
      hierarchy: { hits: ['get_word', 'post_word'], get_word: [] },
      limitHeaders: { remaining: 7, reset: 3600, maxValue: 100 },
    });
  });

  it('answers empty usage reports and hierarchy when the plan has no limits', () => {
    const outcome = authOutcomeOf(answer(200, statusBody('<authorized>true</authorized><plan>Free</plan>')));
    expect(outcome).toEqual({ kind: 'authorized', plan: 'Free', usageReports: [], hierarchy: {} });
  });

  it('reads a single usage report and a single hierarchy metric as lists', () => {
    const body = statusBody(
      `<authorized>true</authorized><usage_reports>${eternityReport}</usage_reports>` +
        '<hierarchy><metric name="hits" children="get_word"/></hierarchy>',
    );
    const outcome = authOutcomeOf(answer(200, body));
    expect(outcome.kind === 'authorized' && outcome.usageReports.map((r) => r.metric)).toEqual(['post_word']);
    expect(outcome.kind === 'authorized' && outcome.hierarchy).toEqual({ hits: ['get_word'] });
  });

  it('converts period boundaries written with a non-UTC offset', () => {
    const report = dayReport
      .replace('2010-05-15 00:00:00 +0000', '2010-05-15 02:00:00 +0200')
      .replace('2010-05-16 00:00:00 +0000', '2010-05-15 19:00:00 -0500');
    const outcome = authOutcomeOf(
      answer(200, statusBody(`<authorized>true</authorized><usage_reports>${report}</usage_reports>`)),
    );
    expect(outcome.kind === 'authorized' && outcome.usageReports[0]).toMatchObject({
      periodStart: Date.UTC(2010, 4, 15),
      periodEnd: Date.UTC(2010, 4, 16),
    });
  });
});

describe('denied answers (409)', () => {
  const reasons: readonly [DenialReason, string][] = [
    ['limits_exceeded', 'usage limits are exceeded'],
    ['application_not_active', 'application is not active'],
    ['application_key_invalid', 'application key &quot;wrong-key&quot; is invalid'],
    ['application_key_invalid', 'application key is missing'],
    ['service_not_active', 'service is not active'],
    ['referrer_not_allowed', 'referrer &quot;evil.example&quot; is not allowed'],
  ];

  it.each(reasons)('reads %s from the rejection-reason header (%s)', (reason, text) => {
    const outcome = authOutcomeOf(answer(409, denial(text), { '3scale-rejection-reason': reason }));
    expect(outcome).toMatchObject({ kind: 'denied', reason, plan: 'Basic' });
  });

  it.each(reasons)('maps %s from the reason text when the header is absent (%s)', (reason, text) => {
    const outcome = authOutcomeOf(answer(409, denial(text)));
    expect(outcome).toMatchObject({ kind: 'denied', reason });
  });

  it('prefers the header over the reason text', () => {
    expect(denialReasonOf('service_not_active', 'usage limits are exceeded')).toBe('service_not_active');
  });

  it('falls back to the text when the header names an unknown reason', () => {
    expect(denialReasonOf('something_new', 'usage limits are exceeded')).toBe('limits_exceeded');
  });

  it('keeps the reason text, usage reports and limit headers of a limits_exceeded denial', () => {
    const body = statusBody(
      `<authorized>false</authorized><reason>usage limits are exceeded</reason><plan>Basic</plan><usage_reports>${dayReport}</usage_reports>`,
    );
    const outcome = authOutcomeOf(
      answer(409, body, {
        '3scale-rejection-reason': 'limits_exceeded',
        '3scale-limit-remaining': '0',
        '3scale-limit-reset': '42',
      }),
    );
    expect(outcome).toMatchObject({
      kind: 'denied',
      reason: 'limits_exceeded',
      reasonText: 'usage limits are exceeded',
      usageReports: [{ metric: 'hits', exceeded: true, currentValue: 101, maxValue: 100 }],
      limitHeaders: { remaining: 0, reset: 42 },
    });
  });

  it('refuses to guess a reason it does not know', () => {
    expect(authOutcomeOf(answer(409, denial('redirect_uri is invalid')))).toMatchObject({
      kind: 'misconfigured',
      code: 'unknown_denial_reason',
      status: 409,
    });
  });
});

describe('error answers', () => {
  const invalidCredential: [number, string, string][] = [
    [403, 'user_key_invalid', 'user key "k" is invalid'],
    [403, 'user_key_invalid', 'user key is missing'],
    [404, 'application_not_found', 'application with id="a" was not found'],
    [404, 'application_not_found', 'application id is missing'],
    [409, 'application_key_invalid', 'application key "x" is invalid'],
  ];

  it.each(invalidCredential)('HTTP %i %s is an invalid credential', (status, code, message) => {
    expect(authOutcomeOf(answer(status, errorBody(code, message)))).toEqual({
      kind: 'invalid_credential',
      code,
      message,
    });
  });

  const misconfiguration: [number, string, string][] = [
    [403, 'provider_key_invalid', 'provider key "pk" is invalid'],
    [403, 'service_token_invalid', 'service token "st" is invalid'],
    [403, 'service_id_invalid', 'service id "42" is invalid'],
    [403, 'provider_key_or_service_token_required', 'Provider key or service token are required'],
    [403, 'authentication_error', 'either app_id or user_key is allowed, not both'],
    [403, 'usage_value_invalid', 'usage value "x" for metric "hits" is invalid'],
    [404, 'metric_invalid', 'metric "nope" is invalid'],
    [422, 'service_id_missing', 'Service id is missing'],
    [422, 'not_valid_data', 'all data must be valid UTF8'],
    [400, 'bad_request', 'request contains syntax errors, should not be repeated without modification'],
    [400, 'transactions_is_blank', 'transactions parameter is blank'],
    [400, 'transactions_format_invalid', 'transactions format is invalid'],
    [400, 'content_type_invalid', 'invalid Content-Type'],
    [403, 'a_code_added_later', 'something new'],
  ];

  it.each(misconfiguration)('HTTP %i %s is a misconfiguration with its status', (status, code, message) => {
    expect(authOutcomeOf(answer(status, errorBody(code, message)))).toEqual({
      kind: 'misconfigured',
      code,
      message,
      status,
    });
  });

  it('decodes XML entities in messages', () => {
    expect(
      authOutcomeOf(answer(404, errorBody('metric_invalid', 'metric &quot;a&amp;b&quot; is invalid'))),
    ).toMatchObject({ message: 'metric "a&b" is invalid' });
  });

  it('names an error without a code as an unexpected answer', () => {
    expect(authOutcomeOf(answer(403, `${XML_DECLARATION}<error>no code</error>`))).toEqual({
      kind: 'misconfigured',
      code: 'unexpected_answer',
      status: 403,
      message: 'no code',
    });
  });
});

describe('platform unavailable', () => {
  it.each([500, 502, 503, 504, 499, 0, 408, 429])('HTTP %i is unavailable whatever the body', (status) => {
    for (const body of [
      '',
      'garbage <<<',
      errorBody('provider_key_invalid', 'provider key "pk" is invalid'),
    ]) {
      expect(authOutcomeOf(answer(status, body))).toMatchObject({
        kind: 'unavailable',
        cause: 'status',
        status,
      });
      expect(reportFailureOf(answer(status, body))).toMatchObject({
        kind: 'unavailable',
        cause: 'status',
        status,
      });
    }
  });
});

describe('answers that are not the Service Management API', () => {
  it.each([
    [200, ''],
    [200, 'garbage <<<'],
    [200, '<html><body>Welcome</body></html>'],
    [404, '<html><body>Not Found</body></html>'],
    [301, ''],
    [403, statusBody('<authorized>true</authorized>')],
    [200, statusBody('<authorized>maybe</authorized>')],
    [200, statusBody('')],
  ])('HTTP %i %j is an unexpected answer', (status, body) => {
    expect(authOutcomeOf(answer(status, body))).toMatchObject({
      kind: 'misconfigured',
      code: 'unexpected_answer',
      status,
    });
  });

  const malformedReports = [
    ['an unknown period', dayReport.replace('period="day"', 'period="fortnight"')],
    ['no metric', dayReport.replace('metric="hits" ', '')],
    ['a non-integer max_value', dayReport.replace('<max_value>100', '<max_value>lots')],
    ['an empty current_value', dayReport.replace('<current_value>101</current_value>', '<current_value/>')],
    ['an ISO date', dayReport.replace('2010-05-16 00:00:00 +0000', '2010-05-16T00:00:00Z')],
    ['an impossible date', dayReport.replace('2010-05-16 00:00:00 +0000', '2010-02-30 00:00:00 +0000')],
  ];

  it.each(malformedReports)('a usage report with %s is an unexpected answer', (_, report) => {
    const body = statusBody(`<authorized>true</authorized><usage_reports>${report}</usage_reports>`);
    expect(authOutcomeOf(answer(200, body))).toMatchObject({
      kind: 'misconfigured',
      code: 'unexpected_answer',
    });
  });
});

describe('report answers', () => {
  it('202 is accepted', () => {
    expect(reportFailureOf(answer(202, ''))).toBeUndefined();
  });

  it.each([
    [403, 'provider_key_invalid'],
    [403, 'user_key_invalid'],
    [400, 'transactions_is_blank'],
    [400, 'transactions_format_invalid'],
    [400, 'content_type_invalid'],
    [422, 'not_valid_data'],
  ])('HTTP %i %s is a misconfiguration (a report has no credential outcome)', (status, code) => {
    expect(reportFailureOf(answer(status, errorBody(code, 'message')))).toEqual({
      kind: 'misconfigured',
      code,
      status,
      message: 'message',
    });
  });

  it.each([
    [200, ''],
    [204, ''],
  ])('HTTP %i is not an acceptance', (status, body) => {
    expect(reportFailureOf(answer(status, body))).toMatchObject({
      kind: 'misconfigured',
      code: 'unexpected_answer',
    });
  });
});

describe('limit headers', () => {
  it('reads remaining, reset and max value', () => {
    expect(
      limitHeadersOf({
        '3scale-limit-remaining': '-1',
        '3scale-limit-reset': '-1',
        '3scale-limit-max-value': '0',
      }),
    ).toEqual({ remaining: -1, reset: -1, maxValue: 0 });
  });

  it('leaves max value out when absent', () => {
    expect(limitHeadersOf({ '3scale-limit-remaining': '5', '3scale-limit-reset': '10' })).toEqual({
      remaining: 5,
      reset: 10,
    });
  });

  it.each([
    [{}],
    [{ '3scale-limit-remaining': '5' }],
    [{ '3scale-limit-remaining': 'five', '3scale-limit-reset': '10' }],
    [{ '3scale-limit-remaining': '5', '3scale-limit-reset': '1.5' }],
  ])('is absent without integer remaining and reset: %j', (headers) => {
    expect(limitHeadersOf(headers)).toBeUndefined();
  });
});
