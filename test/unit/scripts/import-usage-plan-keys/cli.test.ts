/**
 * `npm run import-usage-plan-keys` against the local platform's Account Management API, with API
 * Gateway's usage plans and keys answered by a mocked SDK client: what a dry run lists, what --apply
 * creates (keys that then authorize on their plan), a second run that changes nothing, the keys it
 * leaves alone, and the usage errors. No line it prints carries a key's value.
 */
import {
  APIGatewayClient,
  GetApiKeysCommand,
  GetUsagePlanKeysCommand,
  GetUsagePlansCommand,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { run, TOKEN_VARIABLE } from '../../../../scripts/import-usage-plan-keys/cli';
import { TOKENS, USER_KEY_SERVICE, usePortalPlatform } from '../../local-platform/admin-fixture';

const apiGateway = mockClient(APIGatewayClient);

const KEYS = {
  gold: { id: 'k-gold', name: 'Acme prod', value: 'AcmeProdValue0123456789abcdef', enabled: true },
  silver: { id: 'k-silver', name: 'Beta', value: 'BetaValue0123456789abcdefghij', enabled: true },
  disabled: { id: 'k-off', name: 'Old', value: 'OldValue0123456789abcdefghijk', enabled: false },
  both: { id: 'k-both', name: 'Both', value: 'BothValue0123456789abcdefghij', enabled: true },
  unmapped: { id: 'k-free', name: 'Free', value: 'FreeValue0123456789abcdefghij', enabled: true },
  config: { id: 'k-config', name: 'Config', value: 'config-key', enabled: true },
  outsidePlans: { id: 'k-none', name: 'None', value: 'NoneValue0123456789abcdefghij', enabled: true },
};

function answerUsagePlans() {
  apiGateway.reset();
  // Two pages of plans, as API Gateway pages with `position`.
  apiGateway
    .on(GetUsagePlansCommand, { position: undefined })
    .resolves({ items: [{ id: 'up-gold', name: 'Gold' }], position: 'p2' })
    .on(GetUsagePlansCommand, { position: 'p2' })
    .resolves({
      items: [
        { id: 'up-silver', name: 'Silver' },
        { id: 'up-free', name: 'Free' },
      ],
    });
  const member = (key: { id: string; name: string; value: string }) => ({ ...key, type: 'API_KEY' });
  apiGateway
    .on(GetUsagePlanKeysCommand, { usagePlanId: 'up-gold' })
    .resolves({ items: [member(KEYS.gold), member(KEYS.disabled), member(KEYS.both), member(KEYS.config)] })
    .on(GetUsagePlanKeysCommand, { usagePlanId: 'up-silver' })
    .resolves({ items: [member(KEYS.silver), member(KEYS.both)] })
    .on(GetUsagePlanKeysCommand, { usagePlanId: 'up-free' })
    .resolves({ items: [member(KEYS.unmapped)] });
  apiGateway
    .on(GetApiKeysCommand, { includeValues: true, position: undefined })
    .resolves({ items: [KEYS.gold, KEYS.silver, KEYS.disabled], position: 'next' })
    .on(GetApiKeysCommand, { includeValues: true, position: 'next' })
    .resolves({ items: [KEYS.both, KEYS.unmapped, KEYS.config, KEYS.outsidePlans] });
}

describe('import-usage-plan-keys', () => {
  const { start, signUp, authrep } = usePortalPlatform();
  beforeEach(answerUsagePlans);

  /** `token` null: no admin token in the environment. */
  async function invoke(
    extra: string[],
    token: string | null = TOKENS.adminRw,
    plans = ['--plan', 'up-gold=Basic', '--plan', 'up-silver=Reviewed'],
  ) {
    const platform = await start();
    const account = await signUp('importer');
    const lines: string[] = [];
    const argv = (accountId: string) => [
      '--service-id',
      USER_KEY_SERVICE,
      '--account-id',
      accountId,
      '--platform-url',
      platform.url,
      '--region',
      'eu-west-1',
      ...plans,
      ...extra,
    ];
    const env = token === null ? {} : { [TOKEN_VARIABLE]: token };
    const again = async (more: string[] = []) => {
      const before = lines.length;
      const code = await run([...argv(account.id), ...more], env, (line) => lines.push(line));
      return { code, lines: lines.slice(before) };
    };
    return { again, first: await again(), lines };
  }

  function expectNoValues(lines: readonly string[]) {
    for (const key of Object.values(KEYS)) {
      if (key.value === 'config-key') continue;
      for (const line of lines) expect(line).not.toContain(key.value);
    }
  }

  it('lists what it would create on a dry run and creates nothing', async () => {
    const { first } = await invoke([]);
    expect(first.code).toBe(0);
    expect(first.lines[0]).toMatch(/^Dry run/);
    expect(first.lines).toContain('would create key k-gold "Acme prod" (usage plan Gold): on plan Basic');
    expect(first.lines).toContain('would create key k-silver "Beta" (usage plan Silver): on plan Reviewed');
    expect(first.lines).toContain('skipped      key k-off "Old": disabled in API Gateway');
    expect(first.lines).toContain(
      'skipped      key k-both "Both": its usage plans map to different plans (Basic, Reviewed): import it by hand',
    );
    expect(first.lines).toContain('skipped      key k-free "Free": its usage plans are not in --plan');
    expect(first.lines.find((line) => line.includes('k-config'))).toMatch(
      /^exists {7}key k-config "Config" \(usage plan Gold\): application \S+ already has it$/,
    );
    expect(first.lines.some((line) => line.includes('k-none'))).toBe(false);
    expect(first.lines.at(-1)).toBe('6 usage-plan key(s): 2 would create, 3 skipped, 1 exists');
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: KEYS.gold.value })).toBe(403);
    expectNoValues(first.lines);
  });

  it('creates the applications with --apply, whose keys then authorize; a second run changes nothing', async () => {
    const { first, again } = await invoke(['--apply']);
    expect(first.code).toBe(0);
    expect(first.lines[0]).not.toMatch(/^Dry run/);
    expect(first.lines.find((line) => line.includes('k-gold'))).toMatch(
      /^created {6}key k-gold "Acme prod" \(usage plan Gold\): on plan Basic: application \S+$/,
    );
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: KEYS.gold.value })).toBe(200);
    // Reviewed needs approval: the application starts pending, refused until the provider accepts it.
    expect(first.lines.find((line) => line.includes('k-silver'))).toMatch(/^created .* on plan Reviewed/);
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: KEYS.silver.value })).toBe(409);
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: KEYS.disabled.value })).toBe(403);
    expect(first.lines.at(-1)).toBe('6 usage-plan key(s): 2 created, 3 skipped, 1 exists');

    const second = await again(['--apply']);
    expect(second.code).toBe(0);
    expect(second.lines.find((line) => line.includes('k-gold'))).toMatch(/^exists .*already has it$/);
    expect(second.lines.at(-1)).toBe('6 usage-plan key(s): 3 exists, 3 skipped');
    expectNoValues([...first.lines, ...second.lines]);
  });

  it('leaves a key the platform holds on another plan as it is', async () => {
    const { first } = await invoke(['--apply'], TOKENS.adminRw, ['--plan', 'up-gold=Reviewed']);
    expect(first.lines.find((line) => line.includes('k-config'))).toMatch(
      /^exists {7}key k-config "Config" \(usage plan Gold\): application \S+ already has it, on plan Basic: left as it is$/,
    );
    expect(await authrep({ service_id: USER_KEY_SERVICE, user_key: 'config-key' })).toBe(200);
  });

  it('reports a key the platform refuses and exits 1, going on with the others', async () => {
    const { first } = await invoke(['--apply'], TOKENS.adminRo);
    expect(first.code).toBe(1);
    expect(first.lines.find((line) => line.includes('k-gold'))).toMatch(
      /^failed {7}key k-gold .*: forbidden: /,
    );
    expect(first.lines.at(-1)).toMatch(/2 failed/);
    expectNoValues(first.lines);
  });

  it.each([
    [[], null, `${TOKEN_VARIABLE} must hold`],
    [['--plan', 'up-gold'], TOKENS.adminRw, '--plan up-gold: expected <usage plan id>=<application plan id>'],
    [['--plan', 'up-gold=Pro'], TOKENS.adminRw, 'usage plan up-gold is mapped twice'],
    [['--surprise'], TOKENS.adminRw, "Unknown option '--surprise'"],
  ])('refuses %j with a usage error (exit 2) before calling anything', async (extra, token, message) => {
    const { first } = await invoke(extra, token);
    expect(first.code).toBe(2);
    expect(first.lines).toEqual([expect.stringContaining(message)]);
    expect(apiGateway.calls()).toHaveLength(0);
  });
});
