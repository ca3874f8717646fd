import { describe, expect, it } from 'vitest';
import { throttleTable, validateThrottles } from '../../../../core/budget/throttles';
import { parseConfig } from '../../../../core/settings/config';
import { parseStackFile } from '../../../../local/stack-file';
import { describeOnTopologies } from '../../../support/redis-topology';
import { describeThrottles } from '../throttle-suite';

describeOnTopologies(['in-memory'], describeThrottles);

describe('the throttles setting', () => {
  it('takes a throttle of every call and throttles per metric, by plan', () => {
    const throttles = { Pro: { rate: 10, burst: 20, metrics: { search: { rate: 0.5, burst: 1 } } } };
    expect(validateThrottles(throttles)).toEqual(throttles);
    expect(validateThrottles({ Basic: { metrics: { search: { rate: 2, burst: 5 } } } })).toEqual({
      Basic: { metrics: { search: { rate: 2, burst: 5 } } },
    });
  });

  it.each([
    [{ Pro: { rate: 0, burst: 20 } }, 'throttles.Pro.rate'],
    [{ Pro: { rate: '10', burst: 20 } }, 'throttles.Pro.rate'],
    [{ Pro: { rate: 10, burst: 2.5 } }, 'throttles.Pro.burst'],
    [{ Pro: { rate: 10 } }, 'throttles.Pro.burst'],
    [{ Pro: { rate: 10, burst: 20, window: 1 } }, 'throttles.Pro.window'],
    [{ Pro: {} }, 'throttles.Pro'],
    // A throttle that throttles nothing.
    [{ Pro: { metrics: {} } }, 'throttles.Pro.metrics'],
    [{ Pro: { metrics: { search: { rate: 1, burst: 0 } } } }, 'throttles.Pro.metrics.search.burst'],
    [{ Pro: 10 }, 'throttles.Pro'],
    [[], 'throttles'],
  ])('refuses %j naming %s', (value, setting) => {
    expect(() => validateThrottles(value)).toThrow(expect.objectContaining({ setting }));
  });

  it("refuses a burst below a mapping rule's delta on the same metric: such calls could never pass", () => {
    const config = (burst: number) => ({
      serviceId: 's1',
      mappingRules: [{ method: 'POST', pattern: '/v1/words', metric: 'post_word', delta: 3 }],
      throttles: { Basic: { metrics: { post_word: { rate: 1, burst } } } },
    });
    expect(() => parseConfig(config(2))).toThrow(
      expect.objectContaining({
        setting: 'throttles.Basic.metrics.post_word.burst',
        message: expect.stringMatching(/below the delta 3 of the mapping rule POST \/v1\/words/),
      }),
    );
    expect(parseConfig(config(3)).throttles).toEqual({
      Basic: { metrics: { post_word: { rate: 1, burst: 3 } } },
    });
  });

  it('is a gateway setting of the stack file, refused there naming the gateway and the plan', () => {
    const stackFile = (throttles: unknown) => ({
      gateway: {
        serviceId: 'svc-1',
        platformUrl: 'http://127.0.0.1:1',
        providerKey: 'pk',
        routes: ['GET /v1/words/{word}.json'],
        throttles,
      },
    });
    expect(
      parseStackFile(stackFile({ Basic: { rate: 2, burst: 5 } })).gateways[0]?.configInput,
    ).toMatchObject({ throttles: { Basic: { rate: 2, burst: 5 } } });
    expect(() => parseStackFile(stackFile({ Basic: { rate: -2, burst: 5 } }))).toThrow(
      /gateway\.throttles\.Basic\.rate must be a number of calls per second/,
    );
  });

  it('writes the table the script reads: plan, metric (empty for every call), state field, interval µs and burst, each line after a newline', () => {
    expect(
      throttleTable({ Pro: { rate: 10, burst: 20, metrics: { search: { rate: 0.5, burst: 1 } } } }).text,
    ).toBe('\nPro\t\tthrottle:call@10\t100000\t20\nPro\tsearch\tthrottle:metric:search@0.5\t2000000\t1');
    expect(throttleTable({}).text).toBe('');
  });

  it('names a throttle by plan and field, as replies do: plans of the same rate share the field, not the burst', () => {
    const table = throttleTable({ Basic: { rate: 10, burst: 5 }, Pro: { rate: 10, burst: 20 } });
    expect(table.entryOf('Basic', 'throttle:call@10')).toEqual({ plan: 'Basic', rate: 10, burst: 5 });
    expect(table.entryOf('Pro', 'throttle:call@10')).toEqual({ plan: 'Pro', rate: 10, burst: 20 });
    expect(table.entryOf('Pro', 'throttle:call@5')).toBeUndefined();
  });
});
