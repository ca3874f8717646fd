import { describe, expect, it } from 'vitest';
import { NeedHints } from '../../../../core/budget/need-hints';
import { throttleTable } from '../../../../core/budget/throttles';

const THROTTLES = throttleTable({ Pro: { rate: 10, burst: 20 } });
const HOURLY_HITS = 'limit:hour:hits';
const DAILY_HITS = 'limit:day:hits';

describe('NeedHints: the check script hint arguments', () => {
  it('sends nothing hinted for a metric it has not learned, under no plan', () => {
    expect(new NeedHints(THROTTLES).argsFor({ get_word: 1 })).toEqual([
      '1',
      '0',
      '0',
      '',
      'need:get_word',
      '',
    ]);
  });

  it("sends what it learned of a metric: its limits' count fields, its need and its ancestors", () => {
    const hints = new NeedHints(THROTTLES);
    hints.learn('Basic', ['get_word', `hits ${HOURLY_HITS}`]);
    expect(hints.argsFor({ get_word: 1 })).toEqual([
      '1',
      '1',
      '0',
      'Basic',
      'need:get_word',
      'count:hour:hits',
      `hits ${HOURLY_HITS}`,
      'hits',
      'get_word',
      'hits',
    ]);
  });

  it('sends a need learned after the same metrics were sent, not the arguments it sent before', () => {
    const hints = new NeedHints(THROTTLES);
    hints.learn('Basic', ['hits', HOURLY_HITS]);
    expect(hints.argsFor({ hits: 1 })).toContain(HOURLY_HITS);
    hints.learn('Basic', ['hits', DAILY_HITS]);
    const args = hints.argsFor({ hits: 1 });
    expect(args).toContain(DAILY_HITS);
    expect(args).not.toContain(HOURLY_HITS);
  });

  it("sends a new plan and its throttles' fields once a call under it was allowed", () => {
    const hints = new NeedHints(THROTTLES);
    hints.learn('Basic', ['hits', HOURLY_HITS]);
    expect(hints.argsFor({ hits: 1 }).slice(0, 4)).toEqual(['1', '1', '0', 'Basic']);
    hints.learn('Pro', []);
    const args = hints.argsFor({ hits: 1 });
    expect(args.slice(0, 4)).toEqual(['1', '1', '1', 'Pro']);
    expect(args).toEqual(
      expect.arrayContaining([...THROTTLES.fieldsOf('Pro'), ...THROTTLES.paramsOf('Pro')]),
    );
  });

  it("sends one need per metric, in the order of the call's metrics, whatever their names hold", () => {
    const hints = new NeedHints(THROTTLES);
    expect(hints.argsFor({ 'a,b': 1 }).slice(0, 1)).toEqual(['1']);
    expect(hints.argsFor({ a: 1, b: 1 }).slice(0, 1)).toEqual(['2']);
    expect(hints.argsFor({ b: 1, a: 1 })).toEqual(['2', '0', '0', '', 'need:b', 'need:a', '', '']);
  });
});
