import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { describeAccessCache } from './cache-suite';

// Without a command timeout: ioredis-mock's TIME is off by up to a second and a half, so the hot-path
// deadline runs only where it is set explicitly (and in the same suite on redis-server).
describeAccessCache(async () => new RedisMock() as unknown as Redis);
