/** Application Plan List, as porta's Admin::Api::ApplicationPlansController#index answers it. */
import { describe, expect, it } from 'vitest';
import { USER_KEY_SERVICE, usePortalPlatform } from './admin-fixture';

describe('application plans API', () => {
  const { start, api } = usePortalPlatform();

  it("lists a service's plans, published or hidden, with approval_required and default", async () => {
    await start();
    const answer = await api('GET', `services/${USER_KEY_SERVICE}/application_plans.xml`);
    expect(answer.status).toBe(200);
    expect(answer.body.plans.plan).toEqual([
      expect.objectContaining({
        id: 'Basic',
        name: 'Basic',
        type: 'application_plan',
        state: 'published',
        approval_required: 'false',
        default: 'true',
        custom: 'false',
        service_id: USER_KEY_SERVICE,
      }),
      expect.objectContaining({
        name: 'Reviewed',
        state: 'published',
        approval_required: 'true',
        default: 'false',
      }),
      expect.objectContaining({ name: 'Secret', state: 'hidden' }),
    ]);
  });

  it("lists every service's plans, and answers 404 for a service the caller does not own", async () => {
    await start();
    const all = await api('GET', 'application_plans.xml');
    expect(all.body.plans.plan.map((plan: { name: string }) => plan.name)).toEqual([
      'Basic',
      'Reviewed',
      'Secret',
      'Pro',
      'Client',
    ]);
    expect((await api('GET', 'services/other/application_plans.xml')).status).toBe(404);
  });
});
