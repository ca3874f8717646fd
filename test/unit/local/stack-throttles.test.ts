/**
 * Throttles that could never apply, refused when the local stack reads its file: a plan or metric the
 * local platform's service does not have (names compared as the platform compares them, exactly), and
 * gateways of one service that disagree on its throttles.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStackFile, readStackFile } from '../../../local/stack-file';

const PLATFORM = {
  services: [
    {
      id: 'svc-1',
      providerKey: 'pk',
      authentication: 'user_key',
      metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
      plans: [
        { name: 'Basic', limits: [] },
        { name: 'Pro', limits: [] },
      ],
      applications: [{ id: 'app-1', userKey: 'k-1', plan: 'Basic' }],
    },
  ],
};
const GATEWAY = { serviceId: 'svc-1', routes: ['GET /v1/words/{word}'] };
const stackWith = (...gateway: object[]) => ({ platform: PLATFORM, gateway });

describe('throttles the local platform could never apply', () => {
  it('refuses a plan the service does not have, even one differing only in case', () => {
    expect(() =>
      parseStackFile(stackWith({ ...GATEWAY, throttles: { basic: { rate: 1, burst: 3 } } })),
    ).toThrow(
      expect.objectContaining({
        setting: 'gateway[0].throttles.basic',
        message: expect.stringMatching(/service svc-1 has no plan "basic".*Basic, Pro/),
      }),
    );
  });

  it('refuses a metric the service does not have', () => {
    const throttles = { Basic: { metrics: { get_words: { rate: 1, burst: 3 } } } };
    expect(() => parseStackFile(stackWith({ ...GATEWAY, throttles }))).toThrow(
      expect.objectContaining({ setting: 'gateway[0].throttles.Basic.metrics.get_words' }),
    );
  });

  it('takes plans and metrics (children included) the service has', () => {
    const throttles = { Basic: { rate: 1, burst: 3, metrics: { get_word: { rate: 1, burst: 2 } } } };
    const stack = parseStackFile(stackWith({ ...GATEWAY, throttles }));
    expect(stack.gateways[0]?.configInput.throttles).toEqual(throttles);
  });
});

describe('gateways of one service', () => {
  it('refuses two that disagree on the throttles: they describe the same plans', () => {
    const rest = { ...GATEWAY, throttles: { Basic: { rate: 1, burst: 3 } } };
    const http = { ...GATEWAY, apiType: 'http', stage: 'prod', basePath: '/http' };
    expect(() => parseStackFile(stackWith(rest, http))).toThrow(
      expect.objectContaining({
        setting: 'gateway[1].throttles',
        message: expect.stringMatching(/differ from gateway\[0\]\.throttles.*service svc-1/),
      }),
    );
    expect(parseStackFile(stackWith(rest, { ...http, throttles: rest.throttles })).gateways).toHaveLength(2);
  });

  it('the demo throttles its REST and HTTP APIs of one service alike', () => {
    const demo = readStackFile(path.join(__dirname, '..', '..', '..', 'local', 'demo.stack.json'), {});
    const byService = new Map<string, unknown[]>();
    for (const gateway of demo.gateways) {
      const serviceId = String(gateway.configInput.serviceId);
      byService.set(serviceId, [...(byService.get(serviceId) ?? []), gateway.configInput.throttles ?? {}]);
    }
    const rest = demo.gateways.find((gateway) => gateway.apiType === 'rest' && gateway.basePath === '');
    expect(rest?.configInput.throttles).toEqual({ Basic: { rate: 1, burst: 3 } });
    for (const tables of byService.values()) for (const table of tables) expect(table).toEqual(tables[0]);
  });
});
