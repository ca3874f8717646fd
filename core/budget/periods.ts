import type { Period } from '../platform/types';

/** Longest first: the order in which the platform lists an application's limits for one metric. */
export const PERIODS: readonly Period[] = ['eternity', 'year', 'month', 'week', 'day', 'hour', 'minute'];

export interface PeriodWindow {
  /** Epoch ms of the first instant of the period; 0 for eternity. */
  readonly start: number;
  /** Epoch ms of the first instant after the period; undefined for eternity. */
  readonly end?: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

function floorTo(at: number, unit: number): number {
  return Math.floor(at / unit) * unit;
}

/** The start of the minute `at` is in: where every period but eternity starts. */
export function minuteStart(at: number): number {
  return floorTo(at, MINUTE_MS);
}

/** A period of a fixed length: the one of `unit` ms containing `at`. */
function fixedWindow(at: number, unit: number): PeriodWindow {
  const start = floorTo(at, unit);
  return { start, end: start + unit };
}

/**
 * The period containing `at`, aligned in UTC as the platform aligns it (weeks start on Monday). A calendar
 * date is read only for the periods that need one (the hot path asks for minutes and hours on every call).
 */
export function periodWindow(period: Period, at: number): PeriodWindow {
  switch (period) {
    case 'eternity':
      return { start: 0 };
    case 'minute':
      return fixedWindow(at, MINUTE_MS);
    case 'hour':
      return fixedWindow(at, HOUR_MS);
    case 'day':
      return fixedWindow(at, DAY_MS);
    case 'week': {
      const daysSinceMonday = (new Date(at).getUTCDay() + 6) % 7;
      const start = floorTo(at, DAY_MS) - daysSinceMonday * DAY_MS;
      return { start, end: start + 7 * DAY_MS };
    }
    case 'month': {
      const date = new Date(at);
      const year = date.getUTCFullYear();
      const month = date.getUTCMonth();
      return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
    }
    case 'year': {
      const year = new Date(at).getUTCFullYear();
      return { start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) };
    }
  }
}

const STARTED_PERIODS = ['minute', 'hour', 'day', 'week', 'month', 'year'] as const;

/** The minute whose period starts periodStarts holds (a memo of one entry; NaN: none yet), and them. */
let startsMinute = Number.NaN;
let starts: readonly number[] = [];

/**
 * The starts of the minute, hour, day, week, month and year `now` is in, as the scripts take them, worked
 * out once a minute: every one of these periods starts on a minute, so they hold for the whole minute.
 */
export function periodStarts(now: number): readonly number[] {
  const minute = minuteStart(now);
  if (minute !== startsMinute) {
    starts = STARTED_PERIODS.map((period) => periodWindow(period, now).start);
    startsMinute = minute;
  }
  return starts;
}
