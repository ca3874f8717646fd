/**
 * `npm start` with a gateway whose mapping rules come from its service's proxy configuration on the local
 * platform (mappingRulesSource platform): the rules promoted on the platform decide which calls count, and
 * a promotion takes effect once the bound has passed on the stack's clock, without a restart.
 */
import { afterEach, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { call, IN_PROCESS_COMMAND_TIMEOUT_MS } from './fixtures';

const SERVICE = 'svc-rules';
const PROVIDER_KEY = 'pk-rules';
const USER_KEY = 'rules-user-key-1';
const WORDS = { method: 'GET', pattern: '/v1/words/{word}', metric: 'get_word', delta: 1 };
const PREMIUM = { method: 'GET', pattern: '/v1/premium', metric: 'premium', delta: 1 };

const STACK = {
  platform: {
    services: [
      {
        id: SERVICE,
        providerKey: PROVIDER_KEY,
        authentication: 'user_key',
        metrics: [{ name: 'hits', children: [{ name: 'get_word' }, { name: 'premium' }] }],
        plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 100 }] }],
        applications: [{ id: 'app-1', userKey: USER_KEY, plan: 'Basic' }],
        proxyConfig: { production: [WORDS] },
      },
    ],
  },
  gateway: {
    serviceId: SERVICE,
    routes: ['GET /v1/words/{word}', 'GET /v1/premium'],
    mappingRulesSource: 'platform',
    mappingRulesRefreshSeconds: 60,
  },
};

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

it('counts calls by the promoted rules, and follows a promotion once the bound has passed', async () => {
  let clock = Date.UTC(2030, 0, 1, 10, 1, 0);
  stack = await startLocalStack({
    stack: STACK,
    redis: 'auto',
    sweepIntervalMs: 0,
    redisCommandTimeoutMs: IN_PROCESS_COMMAND_TIMEOUT_MS,
    now: () => clock,
  });
  const platform = stack.platform;
  if (platform === undefined) throw new Error('the stack started no platform');
  const get = (path: string) => call(`${stack?.gatewayUrl}${path}`, { headers: { apikey: USER_KEY } });

  expect((await get('/v1/words/hello')).status).toBe(200);
  expect(await get('/v1/premium')).toMatchObject({ status: 403 });

  const staged = platform.deployStaging(SERVICE, [WORDS, PREMIUM]);
  const promote = await fetch(
    `${platform.url}/admin/api/services/${SERVICE}/proxy/configs/staging/${staged}/promote.json?to=production&access_token=${PROVIDER_KEY}`,
    { method: 'POST' },
  );
  expect(promote.status).toBe(201);
  expect((await get('/v1/premium')).status).toBe(403);
  clock += 60_000;
  expect((await get('/v1/premium')).status).toBe(200);
  expect(stack.metrics()).toMatchObject({ NoMappingRule: 2 });
});
