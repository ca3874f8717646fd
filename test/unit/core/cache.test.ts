import type Redis from 'ioredis';
import RedisMock from 'ioredis-mock';
import { describeAccessCache } from './cache-suite';

describeAccessCache(async () => new RedisMock() as unknown as Redis);
