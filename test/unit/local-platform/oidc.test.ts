/**
 * OpenID Connect services (apisonator's backend_version "oauth", Validators::OIDC_VALIDATORS): the app id
 * names the application, and its key (the client secret) is checked only when one is given.
 */
import { describe, expect, it } from 'vitest';
import { get, PROVIDER_KEY, usePlatform } from './fixture';

const OIDC_SERVICE = '2555417735070';

const running = usePlatform({
  config: {
    platform: {
      services: [
        {
          id: OIDC_SERVICE,
          providerKey: PROVIDER_KEY,
          authentication: 'oidc',
          metrics: [{ name: 'hits' }],
          plans: [{ name: 'Basic', limits: [{ metric: 'hits', period: 'hour', value: 100 }] }],
          applications: [
            { id: 'client-1', appKeys: ['secret-1'], plan: 'Basic' },
            { id: 'client-off', appKeys: ['secret-2'], plan: 'Basic', state: 'suspended' },
          ],
        },
      ],
    },
  },
});

const AUTHORIZE = `/transactions/authorize.xml?provider_key=${PROVIDER_KEY}&service_id=${OIDC_SERVICE}`;

async function reasonOf(query: string): Promise<{ status: number; reason: string | undefined }> {
  const answer = await get(running.platform, `${AUTHORIZE}&${query}`);
  return { status: answer.status, reason: /<reason>([^<]*)<\/reason>/.exec(answer.body)?.[1] };
}

describe('an oidc service', () => {
  it('authorizes an app id without a key (the authorizer sends none for a token)', async () => {
    expect(await reasonOf('app_id=client-1')).toEqual({ status: 200, reason: undefined });
  });

  it('checks a given key: one of the application keys passes, another or an empty one is refused', async () => {
    expect(await reasonOf('app_id=client-1&app_key=secret-1')).toEqual({ status: 200, reason: undefined });
    expect(await reasonOf('app_id=client-1&app_key=wrong')).toEqual({
      status: 409,
      reason: 'application key "wrong" is invalid',
    });
    expect(await reasonOf('app_id=client-1&app_key=')).toMatchObject({ status: 409 });
  });

  it('refuses a suspended application and an unknown one', async () => {
    expect(await reasonOf('app_id=client-off&app_key=secret-2')).toEqual({
      status: 409,
      reason: 'application is not active',
    });
    expect((await get(running.platform, `${AUTHORIZE}&app_id=nobody`)).status).toBe(404);
  });
});
