import type Redis from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createRedisClient, ensureConnected } from '../../lambdas/core/redis-client';
import { type LocalRedis, startRedisServer } from '../../local/redis';
import { describeAccessCache } from '../unit/core/cache-suite';

let server: LocalRedis;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer('/usr/bin/redis-server');
  client = createRedisClient({ host: server.host, port: server.port, tls: false });
  await ensureConnected(client);
});

afterAll(async () => {
  await client?.quit();
  await server?.stop();
});

describeAccessCache(async () => client);
