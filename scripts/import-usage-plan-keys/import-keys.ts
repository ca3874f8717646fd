/**
 * Imports API Gateway usage-plan keys into the platform as user keys: for each key, what to do is
 * decided from the plan map and what the platform already holds, then, when applying, the application
 * is created (porta's `POST /admin/api/accounts/{account_id}/applications.xml` with `user_key`). A run
 * can be repeated: a key the platform already knows is left as it is. Outcomes are data, one per key,
 * and none carries the key's value.
 */
import type { AdminClient, AdminResult } from '../../core/portal/admin-client';
import type { Application } from '../../core/portal/admin-xml';
import type { UsagePlan, UsagePlanKey } from './usage-plan-keys';

export interface ImportTarget {
  readonly serviceId: string;
  /** The developer account that owns the imported applications. */
  readonly accountId: string;
  /** Usage plan id -> the platform's application plan id. Keys of unmapped usage plans are skipped. */
  readonly plans: ReadonlyMap<string, string>;
}

export type KeyOutcome =
  | { readonly kind: 'unmapped' }
  | { readonly kind: 'conflict'; readonly plans: readonly string[] }
  | { readonly kind: 'disabled' }
  | {
      readonly kind: 'exists';
      readonly applicationId: string;
      readonly planId: string;
      readonly samePlan: boolean;
    }
  | { readonly kind: 'would_create'; readonly planId: string }
  | { readonly kind: 'created'; readonly applicationId: string; readonly planId: string }
  | { readonly kind: 'failed'; readonly planId: string; readonly message: string };

export interface KeyReport {
  readonly key: Pick<UsagePlanKey, 'id' | 'name'>;
  readonly usagePlan?: UsagePlan;
  readonly outcome: KeyOutcome;
}

/** Platform calls in flight at once: enough to import thousands of keys in minutes, few enough to be polite. */
const CONCURRENCY = 8;

type Placement =
  | { readonly kind: 'place'; readonly usagePlan: UsagePlan; readonly planId: string }
  | Extract<KeyOutcome, { kind: 'unmapped' | 'conflict' | 'disabled' }>;

function placementOf(key: UsagePlanKey, plans: ReadonlyMap<string, string>): Placement {
  const mapped = key.usagePlans.flatMap((usagePlan) => {
    const planId = plans.get(usagePlan.id);
    return planId === undefined ? [] : [{ usagePlan, planId }];
  });
  const [first] = mapped;
  if (first === undefined) return { kind: 'unmapped' };
  const planIds = [...new Set(mapped.map(({ planId }) => planId))];
  if (planIds.length > 1) return { kind: 'conflict', plans: planIds };
  // A disabled key is refused by API Gateway today; imported, it would be let in.
  if (!key.enabled) return { kind: 'disabled' };
  return { kind: 'place', ...first };
}

function failure(planId: string, result: AdminResult<unknown> & { ok: false }): KeyOutcome {
  return { kind: 'failed', planId, message: `${result.kind}: ${result.message}` };
}

async function importKey(
  admin: AdminClient,
  target: ImportTarget,
  key: UsagePlanKey,
  apply: boolean,
): Promise<KeyReport> {
  const placement = placementOf(key, target.plans);
  const reported = { id: key.id, name: key.name };
  if (placement.kind !== 'place') return { key: reported, outcome: placement };
  const { usagePlan, planId } = placement;
  const outcome = async (): Promise<KeyOutcome> => {
    const found = await admin.findApplicationByUserKey(target.serviceId, key.value);
    if (found.ok) return existing(found.value, planId);
    if (found.kind !== 'not_found') return failure(planId, found);
    if (!apply) return { kind: 'would_create', planId };
    const created = await admin.createApplication(target.accountId, {
      serviceId: target.serviceId,
      planId,
      name: key.name,
      description: `Imported from API Gateway API key ${key.id} (usage plan ${usagePlan.name})`,
      userKey: key.value,
    });
    return created.ok
      ? { kind: 'created', applicationId: created.value.id, planId }
      : failure(planId, created);
  };
  return { key: reported, usagePlan, outcome: await outcome() };
}

function existing(application: Application, planId: string): KeyOutcome {
  return {
    kind: 'exists',
    applicationId: application.id,
    planId: application.planId,
    samePlan: application.planId === planId,
  };
}

/** One report per key, in the order given; creates nothing unless `apply`. */
export async function importUsagePlanKeys(
  admin: AdminClient,
  target: ImportTarget,
  keys: readonly UsagePlanKey[],
  apply: boolean,
): Promise<KeyReport[]> {
  const reports: KeyReport[] = new Array(keys.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < keys.length; index = next++) {
      reports[index] = await importKey(admin, target, keys[index] as UsagePlanKey, apply);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, keys.length) }, worker));
  return reports;
}
