/**
 * The original plugin design as the bench rebuilds it: Express middleware making one synchronous authrep
 * per request at the platform (here the local one, over HTTP), with no cache.
 */
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { originalPluginMiddleware } from '../../../bench/original-plugin';
import { type PlatformClient, platformClientFromConfig } from '../../../core/platform/client';
import { parseConfig } from '../../../core/settings/config';
import { closeServer, listenOnLoopback } from '../../../local/http-server';
import { type RunningPlatform, startPlatform } from '../../../local/platform';

const SERVICE = 'svc-original';
const PROVIDER_KEY = 'pk-original';
const LIMIT = 2;

let platform: RunningPlatform;
let client: PlatformClient;
let server: Server;
let url: string;

beforeAll(async () => {
  platform = await startPlatform({
    config: {
      services: [
        {
          id: SERVICE,
          providerKey: PROVIDER_KEY,
          authentication: 'user_key',
          metrics: [{ name: 'hits', children: [{ name: 'get_word' }] }],
          plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: LIMIT }] }],
          applications: [{ id: 'app-1', userKey: 'key-1', plan: 'Basic' }],
        },
      ],
    },
  });
  const config = parseConfig({
    serviceId: SERVICE,
    platformUrl: platform.url,
    platformCredential: PROVIDER_KEY,
    mappingRules: [{ method: 'GET', pattern: '/v1/words/{word}', metric: 'get_word', delta: 1 }],
  });
  client = platformClientFromConfig(config, PROVIDER_KEY);
  const app = express();
  app.use(originalPluginMiddleware({ config, platform: client }));
  app.use((_request, response) => {
    response.json({ ok: true });
  });
  server = createServer(app);
  url = `http://127.0.0.1:${await listenOnLoopback(server, 0)}`;
});

afterAll(async () => {
  await closeServer(server);
  client.close();
  await platform.stop();
});

const status = async (path: string, headers: Record<string, string> = {}) =>
  (await fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(10_000) })).status;

describe('originalPluginMiddleware', () => {
  it('asks the platform once per request, allows within the limit and refuses beyond it', async () => {
    const before = platform.stats().authrep;
    const statuses = [];
    for (let call = 0; call <= LIMIT; call++)
      statuses.push(await status('/v1/words/hello', { apikey: 'key-1' }));
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 403]);
    expect(platform.stats().authrep - before).toBe(LIMIT + 1);
    expect(platform.usage(SERVICE, 'app-1', 'hits', 'hour')).toBe(LIMIT);
  });

  it('answers 401 without a credential and 403 off the mapping rules, without asking the platform', async () => {
    const before = platform.stats().authrep;
    expect(await status('/v1/words/hello')).toBe(401);
    expect(await status('/v2/other', { apikey: 'key-1' })).toBe(403);
    expect(platform.stats().authrep).toBe(before);
  });
});
