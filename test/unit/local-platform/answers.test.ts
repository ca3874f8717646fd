/**
 * Every reason code and error code of the reference, over raw HTTP: status, body byte for byte, and the
 * rejection-reason header.
 */
import { describe, expect, it } from 'vitest';
import {
  APP_ID_SERVICE,
  errorBody,
  get,
  post,
  SUSPENDED_SERVICE,
  TestClock,
  USER_KEY_SERVICE,
  usePlatform,
  WEDNESDAY,
  XML_DECLARATION,
} from './fixture';

const U = `/transactions/authorize.xml?provider_key=pk-demo&service_id=${USER_KEY_SERVICE}`;
const A = `/transactions/authorize.xml?provider_key=pk-demo&service_id=${APP_ID_SERVICE}`;
const OPTIONS = { '3scale-options': 'rejection_reason_header=1&limit_headers=1' };

const BASIC_REPORTS =
  '<usage_reports><usage_report metric="hits" period="hour"><period_start>2024-01-10 12:00:00 +0000</period_start>' +
  '<period_end>2024-01-10 13:00:00 +0000</period_end><max_value>100</max_value><current_value>0</current_value>' +
  '</usage_report><usage_report metric="post_word" period="eternity"><max_value>0</max_value>' +
  '<current_value>0</current_value></usage_report></usage_reports>';
const PRO_REPORTS =
  '<usage_reports><usage_report metric="hits" period="day"><period_start>2024-01-10 00:00:00 +0000</period_start>' +
  '<period_end>2024-01-11 00:00:00 +0000</period_end><max_value>1000</max_value><current_value>0</current_value>' +
  '</usage_report></usage_reports>';

function denied(reason: string, plan: string, reports: string): string {
  return `${XML_DECLARATION}<status><authorized>false</authorized><reason>${reason}</reason><plan>${plan}</plan>${reports}</status>`;
}

function authorized(plan: string, reports: string): string {
  return `${XML_DECLARATION}<status><authorized>true</authorized><plan>${plan}</plan>${reports}</status>`;
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly status: number;
  readonly body: string;
  /** The 3scale-rejection-reason header: the code on a 409, absent otherwise. */
  readonly reason?: string;
}

const DENIALS: Case[] = [
  {
    name: 'limits_exceeded: a positive usage of a disabled metric',
    path: `${U}&user_key=demo-key-1&usage%5Bpost_word%5D=1`,
    status: 409,
    body: denied('usage limits are exceeded', 'Basic', BASIC_REPORTS),
    reason: 'limits_exceeded',
  },
  {
    name: 'application_not_active: a suspended application',
    path: `${U}&user_key=suspended-key`,
    status: 409,
    body: denied('application is not active', 'Basic', BASIC_REPORTS),
    reason: 'application_not_active',
  },
  {
    name: 'application_key_invalid: app key missing',
    path: `${A}&app_id=keyed-app`,
    status: 409,
    body: denied('application key is missing', 'Pro', PRO_REPORTS),
    reason: 'application_key_invalid',
  },
  {
    name: 'application_key_invalid: empty app key',
    path: `${A}&app_id=keyed-app&app_key=`,
    status: 409,
    body: denied('application key is missing', 'Pro', PRO_REPORTS),
    reason: 'application_key_invalid',
  },
  {
    name: 'application_key_invalid: wrong app key',
    path: `${A}&app_id=keyed-app&app_key=nope`,
    status: 409,
    body: denied('application key "nope" is invalid', 'Pro', PRO_REPORTS),
    reason: 'application_key_invalid',
  },
  {
    name: 'referrer_not_allowed: referrer missing',
    path: `${A}&app_id=web-app`,
    status: 409,
    body: denied('referrer is missing', 'Pro', PRO_REPORTS),
    reason: 'referrer_not_allowed',
  },
  {
    name: 'referrer_not_allowed: referrer outside the filters',
    path: `${A}&app_id=web-app&referrer=evil.org`,
    status: 409,
    body: denied('referrer "evil.org" is not allowed', 'Pro', PRO_REPORTS),
    reason: 'referrer_not_allowed',
  },
  {
    name: 'service_not_active: a suspended service (plan without limits: no usage_reports)',
    path: `/transactions/authorize.xml?provider_key=pk-other&service_id=${SUSPENDED_SERVICE}&user_key=key-9`,
    status: 409,
    body: denied('service is not active', 'Basic', ''),
    reason: 'service_not_active',
  },
];

const ERRORS: Case[] = [
  {
    name: 'user_key_invalid: unknown user key',
    path: `${U}&user_key=nope`,
    status: 403,
    body: errorBody('user_key_invalid', 'user key "nope" is invalid'),
  },
  {
    name: 'user_key_invalid: user key missing',
    path: U,
    status: 403,
    body: errorBody('user_key_invalid', 'user key is missing'),
  },
  {
    name: 'user_key_invalid: an app id in a user_key service',
    path: `${U}&app_id=app-1`,
    status: 403,
    body: errorBody('user_key_invalid', 'user key is missing'),
  },
  {
    name: 'provider_key_invalid',
    path: `/transactions/authorize.xml?provider_key=nope&service_id=${USER_KEY_SERVICE}&user_key=demo-key-1`,
    status: 403,
    body: errorBody('provider_key_invalid', 'provider key "nope" is invalid'),
  },
  {
    name: 'provider_key_invalid_or_service_missing: unknown provider key and no service id',
    path: '/transactions/authorize.xml?provider_key=nope&user_key=demo-key-1',
    status: 403,
    body: errorBody(
      'provider_key_invalid_or_service_missing',
      'provider key "nope" invalid and/or service ID missing',
    ),
  },
  {
    name: 'service_id_invalid: unknown service',
    path: '/transactions/authorize.xml?provider_key=pk-demo&service_id=123&user_key=demo-key-1',
    status: 403,
    body: errorBody('service_id_invalid', 'service id "123" is invalid'),
  },
  {
    name: 'service_id_invalid: a service of another provider',
    path: `/transactions/authorize.xml?provider_key=pk-other&service_id=${USER_KEY_SERVICE}&user_key=demo-key-1`,
    status: 403,
    body: errorBody('service_id_invalid', `service id "${USER_KEY_SERVICE}" is invalid`),
  },
  {
    name: 'service_token_invalid',
    path: `/transactions/authorize.xml?service_token=bad&service_id=${USER_KEY_SERVICE}&user_key=demo-key-1`,
    status: 403,
    body: errorBody(
      'service_token_invalid',
      `service token "bad" or service id "${USER_KEY_SERVICE}" is invalid`,
    ),
  },
  {
    name: 'provider_key_or_service_token_required',
    path: `/transactions/authorize.xml?service_id=${USER_KEY_SERVICE}&user_key=demo-key-1`,
    status: 403,
    body: errorBody('provider_key_or_service_token_required', 'Provider key or service token are required'),
  },
  {
    name: 'service_id_missing: a service token without service id',
    path: '/transactions/authorize.xml?service_token=st-demo&user_key=demo-key-1',
    status: 422,
    body: errorBody('service_id_missing', 'Service ID is missing'),
  },
  {
    name: 'authentication_error: both app_id and user_key',
    path: `${A}&app_id=keyless-app&user_key=demo-key-1`,
    status: 403,
    body: errorBody('authentication_error', 'either app_id or user_key is allowed, not both'),
  },
  {
    name: 'usage_value_invalid: not a number',
    path: `${U}&user_key=demo-key-1&usage%5Bhits%5D=lots`,
    status: 403,
    body: errorBody('usage_value_invalid', 'usage value "lots" for metric "hits" is invalid'),
  },
  {
    name: 'usage_value_invalid: negative',
    path: `${U}&user_key=demo-key-1&usage%5Bhits%5D=-1`,
    status: 403,
    body: errorBody('usage_value_invalid', 'usage value "-1" for metric "hits" is invalid'),
  },
  {
    name: 'usage_value_invalid: empty',
    path: `${U}&user_key=demo-key-1&usage%5Bhits%5D=`,
    status: 403,
    body: errorBody('usage_value_invalid', 'usage value for metric "hits" can not be empty'),
  },
  {
    name: 'usage_value_invalid: a hash where a number belongs',
    path: `${U}&user_key=demo-key-1&usage%5Bhits%5D%5Bx%5D=1`,
    status: 403,
    body: errorBody('usage_value_invalid', 'usage value for metric "hits" can not be empty'),
  },
  {
    name: 'usage that is not a hash: empty 403',
    path: `${U}&user_key=demo-key-1&usage=5`,
    status: 403,
    body: '',
  },
  {
    name: 'application_not_found: unknown app id',
    path: `${A}&app_id=ghost`,
    status: 404,
    body: errorBody('application_not_found', 'application with id="ghost" was not found'),
  },
  {
    name: 'application_not_found: app id missing',
    path: A,
    status: 404,
    body: errorBody('application_not_found', 'application id is missing'),
  },
  {
    name: 'application_not_found: a user key in an app_id service',
    path: `${A}&user_key=demo-key-1`,
    status: 404,
    body: errorBody('application_not_found', 'application id is missing'),
  },
  {
    name: 'metric_invalid',
    path: `${U}&user_key=demo-key-1&usage%5Bnope%5D=1`,
    status: 404,
    body: errorBody('metric_invalid', 'metric "nope" is invalid'),
  },
  {
    name: 'not_valid_data: a value that is not UTF-8',
    path: `${U}&user_key=%FF%FE`,
    status: 422,
    body: errorBody('not_valid_data', 'all data must be valid UTF8'),
  },
  {
    name: 'bad_request: a malformed %-escape',
    path: `${U}&user_key=%zz`,
    status: 400,
    body: errorBody('bad_request', 'Invalid query parameters: invalid %-encoding'),
  },
  {
    name: 'bad_request: a parameter that is both an array and a hash',
    path: `${U}&user_key=demo-key-1&usage%5B%5D=1&usage%5Bhits%5D=1`,
    status: 400,
    body: errorBody(
      'bad_request',
      'request contains syntax errors, should not be repeated without modification',
    ),
  },
];

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const REPORT_AUTH = `provider_key=pk-demo&service_id=${USER_KEY_SERVICE}`;

const REPORT_ERRORS: (Omit<Case, 'path'> & {
  body: string;
  request: string;
  headers?: Record<string, string>;
})[] = [
  {
    name: 'content_type_invalid',
    request: `${REPORT_AUTH}&transactions%5B0%5D%5Buser_key%5D=demo-key-1`,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    status: 400,
    body: errorBody('content_type_invalid', 'invalid Content-Type: application/json'),
  },
  {
    name: 'transactions_is_blank: none',
    request: REPORT_AUTH,
    status: 400,
    body: errorBody('transactions_is_blank', 'transactions parameter is blank'),
  },
  {
    name: 'transactions_is_blank: empty',
    request: `${REPORT_AUTH}&transactions=`,
    status: 400,
    body: errorBody('transactions_is_blank', 'transactions parameter is blank'),
  },
  {
    name: 'transactions_format_invalid: a string',
    request: `${REPORT_AUTH}&transactions=abc`,
    status: 400,
    body: errorBody('transactions_format_invalid', 'transactions format is invalid'),
  },
  {
    name: 'transactions_format_invalid: an array',
    request: `${REPORT_AUTH}&transactions%5B%5D%5Buser_key%5D=demo-key-1`,
    status: 400,
    body: errorBody('transactions_format_invalid', 'transactions format is invalid'),
  },
  {
    name: 'transactions_has_nil_transaction',
    request: `${REPORT_AUTH}&transactions%5B0%5D`,
    status: 400,
    body: errorBody('transactions_has_nil_transaction', 'transactions has a nil transaction'),
  },
  {
    name: 'provider_key_invalid',
    request: `provider_key=nope&service_id=${USER_KEY_SERVICE}&transactions%5B0%5D%5Buser_key%5D=demo-key-1`,
    status: 403,
    body: errorBody('provider_key_invalid', 'provider key "nope" is invalid'),
  },
  {
    name: 'provider_key_or_service_token_required',
    request: 'transactions%5B0%5D%5Buser_key%5D=demo-key-1',
    status: 403,
    body: errorBody('provider_key_or_service_token_required', 'Provider key or service token are required'),
  },
  {
    name: 'not_valid_data',
    request: `${REPORT_AUTH}&transactions%5B0%5D%5Buser_key%5D=%C3%28`,
    status: 422,
    body: errorBody('not_valid_data', 'all data must be valid UTF8'),
  },
  {
    name: 'bad_request: more than 1000 transactions',
    request: `${REPORT_AUTH}&${Array.from({ length: 1001 }, (_, i) => `transactions%5B${i}%5D%5Buser_key%5D=demo-key-1`).join('&')}`,
    status: 400,
    body: errorBody('bad_request', 'a report may carry at most 1000 transactions (got 1001)'),
  },
];

describe('local platform answers', () => {
  const clock = new TestClock(WEDNESDAY);
  const running = usePlatform({ now: clock.now });

  it.each(DENIALS)('$name', async ({ path, status, body, reason }) => {
    const answer = await get(running.platform, path, OPTIONS);
    expect(answer.status).toBe(status);
    expect(answer.body).toBe(body);
    expect(answer.headers.get('content-type')).toBe('application/vnd.3scale-v2.0+xml');
    expect(answer.headers.get('3scale-rejection-reason')).toBe(reason);
  });

  it.each(ERRORS)('$name', async ({ path, status, body }) => {
    const answer = await get(running.platform, path, OPTIONS);
    expect(answer.status).toBe(status);
    expect(answer.body).toBe(body);
    expect(answer.headers.get('content-type')).toBe('application/vnd.3scale-v2.0+xml');
    expect(answer.headers.get('3scale-rejection-reason')).toBeNull();
    expect(answer.headers.get('3scale-limit-remaining')).toBeNull();
  });

  it.each(REPORT_ERRORS)('report $name', async ({ request, headers, status, body }) => {
    const answer = await post(running.platform, request, headers ?? FORM);
    expect(answer.status).toBe(status);
    expect(answer.body).toBe(body);
    expect(answer.headers.get('content-type')).toBe('application/vnd.3scale-v2.0+xml');
  });

  it.each([
    [
      'a service token with its service id',
      `/transactions/authorize.xml?service_token=st-demo&service_id=${USER_KEY_SERVICE}&user_key=demo-key-1`,
      'Basic',
      BASIC_REPORTS,
    ],
    [
      'the provider key alone (its first service)',
      '/transactions/authorize.xml?provider_key=pk-demo&user_key=demo-key-1',
      'Basic',
      BASIC_REPORTS,
    ],
    ['a user key with spaces around it', `${U}&user_key=+demo-key-1+`, 'Basic', BASIC_REPORTS],
    ['one of the app keys', `${A}&app_id=keyed-app&app_key=key-b`, 'Pro', PRO_REPORTS],
    ['an app without keys and no app key', `${A}&app_id=keyless-app`, 'Pro', PRO_REPORTS],
    ['a referrer matching a filter', `${A}&app_id=web-app&referrer=www.example.com`, 'Pro', PRO_REPORTS],
    ['the bypass referrer *', `${A}&app_id=web-app&referrer=*`, 'Pro', PRO_REPORTS],
    [
      'a plan without limits (no usage_reports)',
      `${U}&user_key=unlimited-key&usage%5Bhits%5D=5`,
      'Unlimited',
      '',
    ],
  ])('authorizes %s', async (_name, path, plan, reports) => {
    const answer = await get(running.platform, path, OPTIONS);
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(authorized(plan, reports));
  });

  it('answers no_body=1 (header or parameter) with an empty body, also on errors', async () => {
    const noBody = { '3scale-options': 'no_body=1&rejection_reason_header=1' };
    const allowed = await get(running.platform, `${U}&user_key=demo-key-1`, noBody);
    const denial = await get(running.platform, `${U}&user_key=suspended-key&no_body=true`);
    const error = await get(running.platform, `${U}&user_key=nope`, noBody);
    const withBody = await get(running.platform, `${U}&user_key=nope&no_body=0`);
    expect([allowed.status, allowed.body]).toEqual([200, '']);
    expect([denial.status, denial.body]).toEqual([409, '']);
    expect(denial.headers.get('3scale-rejection-reason')).toBeNull();
    expect([error.status, error.body]).toEqual([403, '']);
    expect(withBody.body).toBe(errorBody('user_key_invalid', 'user key "nope" is invalid'));
  });

  it('escapes XML special characters in messages', async () => {
    const answer = await get(running.platform, `${U}&user_key=%3Cb%3E%26`);
    expect(answer.body).toBe(errorBody('user_key_invalid', 'user key "&lt;b&gt;&amp;" is invalid'));
  });

  it('answers 404 with an empty body on unknown paths and methods', async () => {
    const unknown = await get(running.platform, '/transactions/unknown.xml');
    const trailingSlash = await get(running.platform, '/transactions/authorize.xml/');
    const wrongMethod = await fetch(`${running.platform.url}/transactions/authrep.xml`, { method: 'POST' });
    expect([unknown.status, unknown.body]).toEqual([404, '']);
    expect(trailingSlash.status).toBe(404);
    expect([wrongMethod.status, await wrongMethod.text()]).toEqual([404, '']);
  });

  it('answers a CORS preflight with 204 as the platform does', async () => {
    const response = await fetch(`${running.platform.url}/transactions/authrep.xml`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-headers')).toContain('3scale-options');
  });

  it('answers GET /status with JSON version info', async () => {
    const answer = await get(running.platform, '/status');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok', version: { backend: expect.any(String) } });
  });
});
