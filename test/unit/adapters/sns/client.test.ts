import { SNSClient } from '@aws-sdk/client-sns';
import { describe, expect, it } from 'vitest';
import { snsClientOf, snsClientOnFirstUse } from '../../../../adapters/sns/client';

describe('snsClientOnFirstUse', () => {
  it('builds one client with the settings on first use and hands the same one after', async () => {
    const source = snsClientOnFirstUse({ region: 'eu-west-1', maxAttempts: 2 });
    const [first, second] = await Promise.all([source(), source()]);
    expect(first).toBeInstanceOf(SNSClient);
    expect(second).toBe(first);
    expect(await first.config.region()).toBe('eu-west-1');
    expect(await first.config.maxAttempts()).toBe(2);
  });

  it('hands a client that is already built as it is', async () => {
    const client = new SNSClient({ region: 'us-east-1' });
    expect(await snsClientOf(client)).toBe(client);
  });
});
