/**
 * `npm run import-usage-plan-keys -- --service-id <id> --account-id <id> --plan <usage plan id>=<plan id>
 * --platform-url <admin portal> [--region <region>] [--apply]`, with the platform's admin access token
 * (Account Management API, read and write) in `PLATFORM_ADMIN_TOKEN`. A dry run unless `--apply`: it
 * lists what it would create. It prints each key by its id and name, never its value.
 */
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { AdminClient } from '../../core/portal/admin-client';
import { type ImportTarget, importUsagePlanKeys, type KeyOutcome, type KeyReport } from './import-keys';
import { readUsagePlanKeys } from './usage-plan-keys';

export const TOKEN_VARIABLE = 'PLATFORM_ADMIN_TOKEN';

const OPTIONS = {
  'service-id': { type: 'string' },
  'account-id': { type: 'string' },
  plan: { type: 'string', multiple: true },
  'platform-url': { type: 'string' },
  region: { type: 'string' },
  apply: { type: 'boolean', default: false },
} as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface Invocation {
  readonly target: ImportTarget;
  readonly platformUrl: string;
  readonly accessToken: string;
  readonly region?: string;
  readonly apply: boolean;
}

function required(value: string | undefined, option: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${option} is required`);
  return value.trim();
}

function planMap(pairs: readonly string[] | undefined): Map<string, string> {
  if (pairs === undefined || pairs.length === 0)
    throw new UsageError('--plan <usage plan id>=<application plan id> is required, once per usage plan');
  const plans = new Map<string, string>();
  for (const pair of pairs) {
    const match = /^([^=\s]+)=([^=\s]+)$/.exec(pair);
    if (match === null)
      throw new UsageError(`--plan ${pair}: expected <usage plan id>=<application plan id>`);
    const [, usagePlanId, planId] = match as unknown as [string, string, string];
    if (plans.has(usagePlanId)) throw new UsageError(`--plan: usage plan ${usagePlanId} is mapped twice`);
    plans.set(usagePlanId, planId);
  }
  return plans;
}

function platformUrlOf(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--platform-url ${value}: not a URL (the admin portal, e.g. https://acme-admin.3scale.net)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`--platform-url ${value}: must be http or https`);
  return url.origin;
}

export function invocationOf(argv: readonly string[], env: NodeJS.ProcessEnv): Invocation {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const accessToken = env[TOKEN_VARIABLE];
  if (accessToken === undefined || accessToken === '')
    throw new UsageError(
      `${TOKEN_VARIABLE} must hold the platform's admin access token (Account Management API, rw)`,
    );
  return {
    target: {
      serviceId: required(values['service-id'], 'service-id'),
      accountId: required(values['account-id'], 'account-id'),
      plans: planMap(values.plan),
    },
    platformUrl: platformUrlOf(required(values['platform-url'], 'platform-url')),
    accessToken,
    ...(values.region !== undefined && { region: values.region }),
    apply: values.apply === true,
  };
}

const LABEL: Record<KeyOutcome['kind'], string> = {
  unmapped: 'skipped',
  conflict: 'skipped',
  disabled: 'skipped',
  exists: 'exists',
  would_create: 'would create',
  created: 'created',
  failed: 'failed',
};

function detailOf(report: KeyReport): string {
  const { outcome } = report;
  switch (outcome.kind) {
    case 'unmapped':
      return 'its usage plans are not in --plan';
    case 'conflict':
      return `its usage plans map to different plans (${outcome.plans.join(', ')}): import it by hand`;
    case 'disabled':
      return 'disabled in API Gateway';
    case 'exists':
      return outcome.samePlan
        ? `application ${outcome.applicationId} already has it`
        : `application ${outcome.applicationId} already has it, on plan ${outcome.planId}: left as it is`;
    case 'would_create':
    case 'created':
      return `on plan ${outcome.planId}${outcome.kind === 'created' ? `: application ${outcome.applicationId}` : ''}`;
    case 'failed':
      return `on plan ${outcome.planId}: ${outcome.message}`;
  }
}

export function lineOf(report: KeyReport): string {
  const usagePlan = report.usagePlan === undefined ? '' : ` (usage plan ${report.usagePlan.name})`;
  return `${LABEL[report.outcome.kind].padEnd(12)} key ${report.key.id} "${report.key.name}"${usagePlan}: ${detailOf(report)}`;
}

export function summaryOf(reports: readonly KeyReport[]): string {
  const counts = new Map<string, number>();
  for (const { outcome } of reports)
    counts.set(LABEL[outcome.kind], (counts.get(LABEL[outcome.kind]) ?? 0) + 1);
  const parts = [...counts].map(([label, count]) => `${count} ${label}`);
  return `${reports.length} usage-plan key(s): ${parts.join(', ') || 'nothing to do'}`;
}

/** Runs the import and prints its report; the exit code is 1 when a key failed, 2 on a usage error. */
export async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  print: (line: string) => void,
): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = invocationOf(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    print(`import-usage-plan-keys: ${error.message}`);
    return 2;
  }
  const apiGateway = new APIGatewayClient({
    ...(invocation.region !== undefined && { region: invocation.region }),
    maxAttempts: 5,
    requestHandler: { requestTimeout: 10_000, connectionTimeout: 5_000, throwOnRequestTimeout: true },
  });
  const admin = new AdminClient({ url: invocation.platformUrl, accessToken: invocation.accessToken });
  if (!invocation.apply) print('Dry run: nothing is created. Add --apply to create the applications.');
  const keys = await readUsagePlanKeys(apiGateway);
  const reports = await importUsagePlanKeys(admin, invocation.target, keys, invocation.apply);
  for (const report of reports) print(lineOf(report));
  print(summaryOf(reports));
  return reports.some(({ outcome }) => outcome.kind === 'failed') ? 1 : 0;
}
