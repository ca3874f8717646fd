import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENV, LOCAL_SECRET_ENV } from '../../../core/settings/config';
import { sqsEvent } from './fixtures';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('reporter Lambda entries', () => {
  it('fail the invocation (so SQS delivers again) when the reporter cannot start, naming the setting', async () => {
    vi.stubEnv(ENV.serviceId, 's1');
    vi.stubEnv(LOCAL_SECRET_ENV.providerKey, 'pk-local');
    vi.stubEnv(ENV.redisHost, '');
    const { handler, sweepHandler } = await import('../../../lambdas/reporter/index');
    await expect(handler(sqsEvent([]))).rejects.toThrow(/redis\.host/);
    await expect(sweepHandler()).rejects.toThrow(/redis\.host/);
  });
});
