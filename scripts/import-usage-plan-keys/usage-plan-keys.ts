/**
 * The API keys of API Gateway's usage plans, read through the SDK: every usage plan of the Region
 * (`GetUsagePlans`), the keys each one holds (`GetUsagePlanKeys`), and the keys themselves with their
 * values and whether they are enabled (`GetApiKeys` with `includeValues`). Each list is paged with the
 * SDK's paginators, 500 items a page (the API's largest).
 */
import {
  type APIGatewayClient,
  paginateGetApiKeys,
  paginateGetUsagePlanKeys,
  paginateGetUsagePlans,
} from '@aws-sdk/client-api-gateway';

export interface UsagePlan {
  readonly id: string;
  readonly name: string;
}

export interface UsagePlanKey {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  /** The secret a consumer sends in `x-api-key`: never printed or logged. */
  readonly value: string;
  /** The usage plans the key belongs to, in the order API Gateway lists them. */
  readonly usagePlans: readonly UsagePlan[];
}

const PAGE_SIZE = 500;

/** Every API key that belongs to at least one usage plan; keys outside any plan meter nothing. */
export async function readUsagePlanKeys(client: APIGatewayClient): Promise<UsagePlanKey[]> {
  const plansOfKey = new Map<string, UsagePlan[]>();
  for await (const page of paginateGetUsagePlans({ client, pageSize: PAGE_SIZE }, {})) {
    for (const plan of page.items ?? []) {
      if (plan.id === undefined) continue;
      const usagePlan = { id: plan.id, name: plan.name ?? plan.id };
      const pages = paginateGetUsagePlanKeys({ client, pageSize: PAGE_SIZE }, { usagePlanId: plan.id });
      for await (const keys of pages) {
        for (const key of keys.items ?? []) {
          if (key.id === undefined || key.type !== 'API_KEY') continue;
          plansOfKey.set(key.id, [...(plansOfKey.get(key.id) ?? []), usagePlan]);
        }
      }
    }
  }
  const keys: UsagePlanKey[] = [];
  for await (const page of paginateGetApiKeys({ client, pageSize: PAGE_SIZE }, { includeValues: true })) {
    for (const key of page.items ?? []) {
      const usagePlans = key.id === undefined ? undefined : plansOfKey.get(key.id);
      if (usagePlans === undefined || key.id === undefined || key.value === undefined) continue;
      keys.push({
        id: key.id,
        name: key.name ?? key.id,
        enabled: key.enabled === true,
        value: key.value,
        usagePlans,
      });
    }
  }
  return keys;
}
