/**
 * The platform's official Node.js client (npm `3scale`, HTTPS only) against the local platform over TLS.
 * The client takes no agent or CA option and calls https.request with the global agent, so the test trusts
 * the platform's self-signed certificate on that agent (verification stays on) and restores it after.
 */
import { globalAgent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlatform, startPlatform } from '../../../local/platform';
import { CONFIG, PROVIDER_KEY, SERVICE_TOKEN, TestClock, USER_KEY_SERVICE, WEDNESDAY } from './fixture';

interface ClientUsageReport {
  metric: string;
  period: string;
  current_value: string;
  max_value: string;
  period_start?: string;
  period_end?: string;
}

interface ClientResponse {
  status_code: number;
  error_code: string | null;
  error_message: string | null;
  plan?: string;
  usage_reports?: ClientUsageReport[];
  is_success(): boolean;
}

type Callback = (response: ClientResponse) => void;

interface ThreeScaleClient {
  authrep_with_user_key(options: Record<string, unknown>, callback: Callback): void;
  authorize_with_user_key(options: Record<string, unknown>, callback: Callback): void;
  report(serviceId: string, transactions: Record<string, unknown>[], callback: Callback): void;
}

type ClientConstructor = new (
  providerKeyOrOptions: string | { host: string; port: number },
  options?: { host: string; port: number },
) => ThreeScaleClient;

const { Client } = require('3scale') as { Client: ClientConstructor };

/** The client has no timeout of its own. */
function answer(call: (callback: Callback) => void): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer from the 3scale client within 5 s')), 5000);
    call((response) => {
      clearTimeout(timer);
      resolve(response);
    });
  });
}

describe('the official 3scale Node.js client over TLS', () => {
  let platform: RunningPlatform;
  let tokenClient: ThreeScaleClient;
  const savedCa = globalAgent.options.ca;

  beforeAll(async () => {
    platform = await startPlatform({ config: CONFIG, tls: true, now: new TestClock(WEDNESDAY).now });
    globalAgent.options.ca = platform.certificate;
    tokenClient = new Client({ host: '127.0.0.1', port: platform.port });
  });

  afterAll(async () => {
    globalAgent.options.ca = savedCa;
    globalAgent.destroy();
    await platform.stop();
  });

  it('listens on https with a certificate for 127.0.0.1', () => {
    expect(platform.url).toBe(`https://127.0.0.1:${platform.port}`);
    expect(platform.certificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('authrep: authorized, with the usage reports including this call', async () => {
    const response = await answer((callback) =>
      tokenClient.authrep_with_user_key(
        {
          service_token: SERVICE_TOKEN,
          service_id: USER_KEY_SERVICE,
          user_key: 'demo-key-1',
          usage: { get_word: 2 },
        },
        callback,
      ),
    );
    expect(response.is_success()).toBe(true);
    expect(response.status_code).toBe(200);
    expect(response.plan).toBe('Basic');
    expect(response.usage_reports).toEqual([
      expect.objectContaining({
        metric: 'hits',
        period: 'hour',
        current_value: '2',
        max_value: '100',
        period_start: '2024-01-10 12:00:00 +0000',
        period_end: '2024-01-10 13:00:00 +0000',
      }),
      expect.objectContaining({
        metric: 'post_word',
        period: 'eternity',
        current_value: '0',
        max_value: '0',
      }),
    ]);
    expect(platform.usage(USER_KEY_SERVICE, 'app-1', 'get_word', 'hour')).toBe(2);
  });

  it('authrep: limits exceeded on a disabled metric', async () => {
    const response = await answer((callback) =>
      tokenClient.authrep_with_user_key(
        {
          service_token: SERVICE_TOKEN,
          service_id: USER_KEY_SERVICE,
          user_key: 'demo-key-1',
          usage: { post_word: 1 },
        },
        callback,
      ),
    );
    expect(response.is_success()).toBe(false);
    expect(response.status_code).toBe(409);
    expect(response.error_message).toBe('usage limits are exceeded');
  });

  it('authorize: an unknown user key is an error with its code', async () => {
    const response = await answer((callback) =>
      tokenClient.authorize_with_user_key(
        { service_token: SERVICE_TOKEN, service_id: USER_KEY_SERVICE, user_key: 'nope' },
        callback,
      ),
    );
    expect(response.is_success()).toBe(false);
    expect(response.status_code).toBe(403);
    expect(response.error_code).toBe('user_key_invalid');
    expect(response.error_message).toBe('user key "nope" is invalid');
  });

  it('report: accepted, and the usage is recorded', async () => {
    const warn = console.warn;
    console.warn = () => {}; // the client warns that provider keys are deprecated; its report needs one
    const providerClient = new Client(PROVIDER_KEY, { host: '127.0.0.1', port: platform.port });
    console.warn = warn;
    const before = platform.usage(USER_KEY_SERVICE, 'app-2', 'hits', 'hour');
    const response = await answer((callback) =>
      providerClient.report(
        USER_KEY_SERVICE,
        [
          { user_key: 'demo-key-2', usage: { hits: 3 } },
          { user_key: 'demo-key-2', usage: { get_word: 1 } },
        ],
        callback,
      ),
    );
    expect(response.is_success()).toBe(true);
    expect(response.status_code).toBe(202);
    expect(platform.usage(USER_KEY_SERVICE, 'app-2', 'hits', 'hour')).toBe(before + 4);
  });
});
