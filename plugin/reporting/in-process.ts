/**
 * In-process reporting: the flusher lives in the application's process and does what the SQS delivery
 * delay and the reporter Lambda do for the authorizer.
 * - A report message (published by the core when a call opens a budget's report window) schedules a
 *   flush of that budget one report window later, through the reporter's own core
 *   (core/reporting/reporting.ts): the same drain, leases and settle, so several processes, or a
 *   process and the stack's reporter, never report the same usage twice.
 * - A sweep every `sweepIntervalMs` reports usage pending for a few report windows whose flush never
 *   ran: a process that died between the call and its flush.
 * - close() reports every pending call now (the scheduled budgets, then a sweep of all pending usage
 *   however recent), as Ctrl-C does for `npm start`.
 */
import { errorMessage } from '../../core/observability/observability';
import { createUsageFlusher, sweepMinAgeMs, sweepUnreported } from '../../core/reporting/reporting';
import type { ReportChannel, ReportingMode } from '.';

export const inProcessReporting: ReportingMode = {
  start(context): ReportChannel {
    const { sweepIntervalMs, snsClient, ...deps } = context;
    const flusher = createUsageFlusher(deps);
    const windowMs = context.config.reportWindowSeconds * 1000;
    const scheduled = new Map<string, NodeJS.Timeout>();
    const running = new Set<Promise<unknown>>();
    let closed = false;

    const track = <T>(work: Promise<T>): Promise<T> => {
      running.add(work);
      work.finally(() => running.delete(work)).catch(() => undefined);
      return work;
    };
    const flush = (credentialIds: readonly string[]) =>
      track(
        flusher.flush(credentialIds).catch((error: unknown) => {
          context.logger.warn('in-process flush failed: the usage stays pending for the sweep', {
            error: errorMessage(error),
          });
        }),
      );
    const sweep = (minAgeMs: number) =>
      track(
        sweepUnreported(deps, flusher, minAgeMs).catch((error: unknown) => {
          context.logger.warn('in-process sweep failed', { error: errorMessage(error) });
        }),
      );

    const sweepTimer =
      sweepIntervalMs > 0
        ? setInterval(() => void sweep(sweepMinAgeMs(context.config)), sweepIntervalMs)
        : undefined;
    sweepTimer?.unref();

    return {
      publisher: {
        async publish(message) {
          const { credentialId } = message;
          if (closed || scheduled.has(credentialId)) return;
          const timer = setTimeout(() => {
            scheduled.delete(credentialId);
            void flush([credentialId]);
          }, windowMs);
          // A pending flush never keeps the process alive: close() or the sweep reports it.
          timer.unref();
          scheduled.set(credentialId, timer);
        },
      },
      async close() {
        closed = true;
        if (sweepTimer) clearInterval(sweepTimer);
        const due = [...scheduled.keys()];
        for (const timer of scheduled.values()) clearTimeout(timer);
        scheduled.clear();
        await Promise.allSettled([...running]);
        if (due.length > 0) await flush(due);
        await sweep(0);
      },
    };
  },
};
