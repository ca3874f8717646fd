/** The plugin connection's command deadline: one queue and one timer, on a real redis-server held by CLIENT PAUSE. */
import Redis, { type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findOnPath, type LocalRedis, startRedisServer } from '../../../local/redis';
import { COMMAND_TIMED_OUT, withCommandDeadlines } from '../../../plugin/command-deadlines';

let server: LocalRedis;
let admin: Redis;
const clients: Redis[] = [];

beforeAll(async () => {
  const binary = findOnPath('redis-server');
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  server = await startRedisServer(binary);
  admin = new Redis({ host: server.host, port: server.port, lazyConnect: true });
  await admin.connect();
});

afterEach(async () => {
  await admin.client('UNPAUSE');
  for (const client of clients.splice(0)) client.disconnect();
});

afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

/** A connected client whose commands get `timeoutMs` from the deadline queue. */
async function watched(timeoutMs: number, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, ...options });
  clients.push(client);
  await client.connect();
  return withCommandDeadlines(client, timeoutMs);
}

/** Holds every client's write commands for `ms` (reads and the admin's CLIENT UNPAUSE go on). */
async function hold(ms: number): Promise<void> {
  await admin.client('PAUSE', ms, 'WRITE');
}

describe('withCommandDeadlines', () => {
  it("rejects a command Redis holds past its deadline with ioredis's error; the connection goes on", async () => {
    const client = await watched(100);
    await hold(30_000);
    await expect(client.set('k', 'held')).rejects.toThrow(COMMAND_TIMED_OUT);
    await admin.client('UNPAUSE');
    await expect(client.set('k', 'v')).resolves.toBe('OK');
    await expect(client.get('k')).resolves.toBe('v');
  });

  it('gives each command of a stream its own deadline, those sent later too', async () => {
    const client = await watched(100);
    await expect(client.set('k', 'v')).resolves.toBe('OK');
    await hold(30_000);
    const first = client.set('a', '1');
    await new Promise((resolve) => setTimeout(resolve, 40));
    const second = client.set('b', '1');
    await expect(first).rejects.toThrow(COMMAND_TIMED_OUT);
    const third = client.set('c', '1');
    await expect(second).rejects.toThrow(COMMAND_TIMED_OUT);
    await expect(third).rejects.toThrow(COMMAND_TIMED_OUT);
  });

  it("replaces ioredis's own timer: a command within the queue's deadline outlives the client's commandTimeout", async () => {
    const client = await watched(10_000, { commandTimeout: 50 });
    await hold(400);
    await expect(client.set('k', 'v')).resolves.toBe('OK');
  });
});
