/**
 * The one concurrency driver, used unchanged for the project and for the baseline: `concurrency`
 * workers take the next call index until `total` calls are made; each call is timed on its own with
 * process.hrtime. Answers (and thrown errors: an authorizer's 401 is a throw) are classified after
 * the run, so classifying them costs the timed calls nothing. A run given `stop` takes no further call once
 * it is aborted (the calls under way finish): its figures then cover the calls it made.
 */
import type { Caller } from './system';

export interface DriverRun<Outcome extends string> {
  /** Calls made: `total`, or fewer when stopped. */
  readonly calls: number;
  readonly durationMs: number;
  /** Per-call latency in nanoseconds, in call-index order. */
  readonly latenciesNs: Float64Array;
  readonly outcomes: Readonly<Partial<Record<Outcome, number>>>;
}

export async function runConcurrently<Answer, Outcome extends string>(
  total: number,
  concurrency: number,
  call: (index: number) => Promise<Answer>,
  classify: (settled: PromiseSettledResult<Answer>, index: number) => Outcome,
  stop?: AbortSignal,
): Promise<DriverRun<Outcome>> {
  if (!Number.isInteger(total) || total < 1)
    throw new RangeError(`total must be a positive integer: ${total}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer: ${concurrency}`);
  }
  const latenciesNs = new Float64Array(total);
  const settled = new Array<PromiseSettledResult<Answer>>(total);
  let next = 0;
  const worker = async () => {
    while (next < total && !stop?.aborted) {
      const index = next++;
      const start = process.hrtime.bigint();
      try {
        settled[index] = { status: 'fulfilled', value: await call(index) };
      } catch (reason) {
        settled[index] = { status: 'rejected', reason };
      }
      latenciesNs[index] = Number(process.hrtime.bigint() - start);
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  const durationMs = Number(process.hrtime.bigint() - start) / 1e6;
  const outcomes: Partial<Record<Outcome, number>> = {};
  settled.slice(0, next).forEach((result, index) => {
    const outcome = classify(result, index);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  });
  return { calls: next, durationMs, latenciesNs: latenciesNs.subarray(0, next), outcomes };
}

/** `count` calls of `caller` from call `from` on, `concurrency` at a time, until `stop` if given. */
export function drive(caller: Caller, from: number, count: number, concurrency: number, stop?: AbortSignal) {
  return runConcurrently(
    count,
    concurrency,
    (i) => caller.send(from + i),
    (settled, i) => caller.outcome(settled, from + i),
    stop,
  );
}
