import { describe, expect, it } from 'vitest';
import { periodStarts, periodWindow } from '../../../../core/budget/periods';

const at = (iso: string) => Date.parse(iso);

describe('period windows (UTC, as the platform aligns them)', () => {
  it.each([
    ['minute', '2024-01-10T12:30:15.500Z', '2024-01-10T12:30:00Z', '2024-01-10T12:31:00Z'],
    ['hour', '2024-01-10T12:30:15Z', '2024-01-10T12:00:00Z', '2024-01-10T13:00:00Z'],
    ['day', '2024-01-10T23:59:59.999Z', '2024-01-10T00:00:00Z', '2024-01-11T00:00:00Z'],
    ['week', '2024-01-10T12:00:00Z', '2024-01-08T00:00:00Z', '2024-01-15T00:00:00Z'],
    ['week', '2024-01-14T23:59:59Z', '2024-01-08T00:00:00Z', '2024-01-15T00:00:00Z'],
    ['week', '2024-01-15T00:00:00Z', '2024-01-15T00:00:00Z', '2024-01-22T00:00:00Z'],
    ['week', '2025-01-01T08:00:00Z', '2024-12-30T00:00:00Z', '2025-01-06T00:00:00Z'],
    ['month', '2024-02-29T10:00:00Z', '2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'],
    ['month', '2024-12-31T23:59:59Z', '2024-12-01T00:00:00Z', '2025-01-01T00:00:00Z'],
    ['year', '2024-07-01T00:00:00Z', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z'],
  ] as const)('%s containing %s runs %s .. %s', (period, time, start, end) => {
    expect(periodWindow(period, at(time))).toEqual({ start: at(start), end: at(end) });
  });

  it('eternity has no end', () => {
    expect(periodWindow('eternity', at('2024-01-10T12:00:00Z'))).toEqual({ start: 0 });
  });
});

describe('period starts (minute, hour, day, week, month, year), as the scripts take them', () => {
  const startsAt = (iso: string) => [
    at(iso),
    at('2024-12-31T23:00:00Z'),
    at('2024-12-31T00:00:00Z'),
    at('2024-12-30T00:00:00Z'),
    at('2024-12-01T00:00:00Z'),
    at('2024-01-01T00:00:00Z'),
  ];

  it('hold for the whole minute, and move with the next one, a new year included', () => {
    expect(periodStarts(at('2024-12-31T23:59:00.001Z'))).toEqual(startsAt('2024-12-31T23:59:00Z'));
    expect(periodStarts(at('2024-12-31T23:59:59.999Z'))).toEqual(startsAt('2024-12-31T23:59:00Z'));
    expect(periodStarts(at('2025-01-01T00:00:00Z'))).toEqual([
      at('2025-01-01T00:00:00Z'),
      at('2025-01-01T00:00:00Z'),
      at('2025-01-01T00:00:00Z'),
      at('2024-12-30T00:00:00Z'),
      at('2025-01-01T00:00:00Z'),
      at('2025-01-01T00:00:00Z'),
    ]);
    expect(periodStarts(at('2024-12-31T23:59:30Z'))).toEqual(startsAt('2024-12-31T23:59:00Z'));
  });
});
