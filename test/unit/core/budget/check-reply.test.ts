import { describe, expect, it } from 'vitest';
import { checkReplyOf, checkResultOf } from '../../../../core/budget/check-reply';
import { throttleTable } from '../../../../core/budget/throttles';

describe('checkResultOf: the throttle a reply names', () => {
  const table = throttleTable({ Pro: { rate: 10, burst: 20 } });
  const NOW = Date.UTC(2030, 0, 1);
  const allowed = (field: string) =>
    ['allow', 'Pro', '0', '0', '', '0', '-1', '0', String(NOW), '0', field, '19', '100'] as const;

  it("maps an allowed call's field to the throttle of its plan", () => {
    expect(checkResultOf(allowed('throttle:call@10'), NOW, table)).toMatchObject({
      kind: 'allow',
      throttle: { rate: 10, burst: 20, remaining: 19, fullInMs: 100 },
    });
  });

  it('keeps an allowed call allowed, without feedback, when the field is not in the table: its usage is recorded already', () => {
    const result = checkResultOf(allowed('throttle:call@5'), NOW, table);
    expect(result.kind).toBe('allow');
    expect(result).not.toHaveProperty('throttle');
  });

  it('fails a refusal that names a throttle the table does not have: nothing was recorded', () => {
    expect(() =>
      checkResultOf(['deny', 'rate_limited', 'Pro', '0', 'throttle:call@5', '100'], NOW, table),
    ).toThrow(/throttle this cache does not have: throttle:call@5/);
  });
});

describe("checkReplyOf: the hit path's reply as one text", () => {
  it('gives the items of the table reply, the hinted plan in its place, with and without a throttle', () => {
    expect(checkReplyOf('allow\t\t1\t0\t100\t3600000\t42\t0\t5\t\t\t\tlimit:hour:hits', 'Basic')).toEqual([
      'allow',
      'Basic',
      '1',
      '0',
      'limit:hour:hits',
      '100',
      '3600000',
      '42',
      '0',
      '5',
    ]);
    expect(checkReplyOf('allow\t\t0\t0\t0\t-1\t0\t0\t5\tthrottle:call@10\t19\t100\t', 'Basic')).toEqual([
      'allow',
      'Basic',
      '0',
      '0',
      '',
      '0',
      '-1',
      '0',
      '0',
      '5',
      'throttle:call@10',
      '19',
      '100',
    ]);
  });

  it("keeps a limit field whose metric's name holds a tab whole: it comes last", () => {
    expect(checkReplyOf('allow\t\t0\t0\t9\t-1\t8\t0\t5\t\t\t\tlimit:day:odd\tname', 'P')[4]).toBe(
      'limit:day:odd\tname',
    );
  });

  it('takes a table reply item by item, and fails a text that is not an allow', () => {
    expect(checkReplyOf(['miss', '1', 0], 'P')).toEqual(['miss', '1', '0']);
    expect(() => checkReplyOf('deny\t\t0', 'P')).toThrow(/unexpected check reply/);
  });
});

describe('checkResultOf: the limit a reply names by its field', () => {
  const table = throttleTable({});
  const NOW = Date.UTC(2030, 0, 1);
  const HOUR_END = NOW + 3_600_000;
  const allowed = (field: string) => ['allow', 'P', '0', '0', field, '100', String(HOUR_END), '41', '0', '5'];

  it("reads the period and the metric from the field, whatever the metric's name holds", () => {
    expect(checkResultOf(allowed('limit:hour:odd:name\nx'), NOW, table)).toMatchObject({
      kind: 'allow',
      limit: { metric: 'odd:name\nx', period: 'hour', max: 100, resetAt: HOUR_END, remaining: 41 },
    });
    expect(
      checkResultOf(['deny', 'limits_exceeded', 'P', '1', 'limit:day:hits', '7', '-1'], NOW, table),
    ).toMatchObject({ kind: 'limited', publish: true, limit: { metric: 'hits', period: 'day', max: 7 } });
  });

  it('keeps an allowed call allowed, without feedback, when the field is not a limit: its usage is recorded already', () => {
    const result = checkResultOf(allowed('hits'), NOW, table);
    expect(result.kind).toBe('allow');
    expect(result).not.toHaveProperty('limit');
  });

  it('fails a refusal that names no limit field', () => {
    expect(() => checkResultOf(['deny', 'limits_exceeded', 'P', '0', 'hits', '7', '-1'], NOW, table)).toThrow(
      /names no limit field: hits/,
    );
  });
});
