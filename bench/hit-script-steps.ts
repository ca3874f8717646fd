/**
 * Where a cache hit's script time goes: the hit's script (CHECK_SCRIPT) cut short after each of its steps,
 * so that, run against the same budget with the same arguments, each cut's time minus the one before is
 * what that step costs (docs/performance.md, "Issue 34"). Pure: bench/hit-script.ts runs them.
 */
import { median } from './stats';

/** A step of the hit's script: the script cut short before the line holding `before` ends right after it. */
export interface HitScriptStep {
  readonly name: string;
  /** What the step adds to the one before. */
  readonly adds: string;
  /** Text of CHECK_SCRIPT found exactly once, on the line that follows the step. */
  readonly before: string;
}

/**
 * In the order the script runs them. A changed script that loses a marker, or holds it twice, fails the
 * bench's test instead of timing something else.
 */
export const HIT_SCRIPT_STEPS: readonly HitScriptStep[] = [
  {
    name: 'definitions',
    adds: "the script's function definitions before the hit path",
    before: 'local deadline = tonumber(ARGV[5])',
  },
  { name: 'deadline', adds: 'TIME and the deadline check', before: 'local now = tonumber(ARGV[1])\n' },
  {
    name: 'snapshot',
    adds: "the hints' offsets, the snapshot's HMGET, the needs and throttle fields checked",
    before: 'local bucket = ARGV[8]',
  },
  {
    name: 'pending',
    adds: "the bucket's last call and the call's usage in it (HMGET), the counts' test",
    before: 'local single, requested = ',
  },
  {
    name: 'counts parsed',
    adds: 'the requested usage added up, the counts parsed',
    before: 'local exceeded, tightest = false, nil',
  },
  {
    name: 'limits',
    adds: 'the limits checked, throttles (none)',
    before: 'local usage, publish = ',
  },
  {
    name: 'record',
    adds: "the usage's HSET and the counts' HSET",
    before: 'local over, synced, field, max, period_end, left = ',
  },
];

/** The script with `do return 1 end` before the line holding `before`; throws unless found exactly once. */
export function cutShortBefore(lua: string, before: string): string {
  const at = lua.indexOf(before);
  if (at < 0 || lua.indexOf(before, at + 1) >= 0) {
    throw new Error(
      `the hit's script holds ${JSON.stringify(before)} ${at < 0 ? 'nowhere' : 'more than once'}`,
    );
  }
  const lineStart = lua.lastIndexOf('\n', at) + 1;
  return `${lua.slice(0, lineStart)}do return 1 end\n${lua.slice(lineStart)}`;
}

/** Each variant's rounds (µs per call, in round order) against the reference's of the same rounds. */
export interface PairedFigure {
  readonly name: string;
  readonly medianMicros: number;
  /** The median over the rounds of (variant - reference) in the same round. */
  readonly medianDifferenceMicros: number;
  readonly rounds: number;
}

export function pairedFigures(
  rounds: ReadonlyMap<string, readonly number[]>,
  reference: string,
): PairedFigure[] {
  const base = rounds.get(reference);
  if (base === undefined || base.length === 0) throw new Error(`no rounds of ${reference}`);
  return [...rounds].map(([name, micros]) => {
    if (micros.length !== base.length)
      throw new Error(`${name}: ${micros.length} rounds, ${reference} ${base.length}`);
    return {
      name,
      medianMicros: median(micros),
      medianDifferenceMicros: median(micros.map((value, round) => value - (base[round] as number))),
      rounds: micros.length,
    };
  });
}
