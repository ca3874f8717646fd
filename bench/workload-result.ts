/**
 * A workload's result: what its measured chunks add up to (tally.ts), the usage the platform recorded for
 * its keys, on a cluster each primary's share, and its flood's figures when it had one.
 */
import type { Prepared } from './prepare';
import type { PrimaryFigures, WorkloadResult } from './report';
import { summarizeLatencies, throughput } from './stats';
import type { RedisUnderTest } from './system';
import { secondsTouched } from './targets';

export function resultOf(redis: RedisUnderTest, prepared: Prepared): WorkloadResult {
  const { workload, system, size, spec, load, tally, placement, prime, flood } = prepared;
  if (!tally.complete) throw new Error(`bench: ${workload}/${system.design} left calls unmeasured`);
  const calls = tally.calls;
  const roundThroughputs = tally.chunkThroughputs;
  const roundRedisCpuMicrosPerCall = tally.chunkRedisCpuMicrosPerCall;
  const roundScriptMicrosPerCall = tally.chunkScriptMicrosPerCall;
  const perPrimary = tally.primaries;
  const executedTotal = perPrimary.reduce((sum, primary) => sum + primary.total, 0);
  const serverCpuSecondsUsed = perPrimary.reduce((sum, primary) => sum + primary.cpuSeconds, 0);
  const scriptMicrosUsed = perPrimary.reduce((sum, primary) => sum + primary.scriptMicros, 0);
  const reported = load.keys.reduce(
    (sum, key) => sum + system.platform.usage(system.setup.serviceId, key, 'hits', 'eternity'),
    0,
  );
  const primaries: PrimaryFigures[] | undefined =
    placement &&
    redis.primaries.map(({ address }, i) => {
      const primary = perPrimary[i] ?? { total: 0, cpuSeconds: 0 };
      return {
        address,
        slots: placement.slotsOf.get(address) ?? 0,
        keys: load.keys.filter((key) => placement.owners.get(key) === address).length,
        authorizations: load.events.filter(
          (event) => placement.owners.get(String(event.headers?.apikey)) === address,
        ).length,
        commandsExecuted: primary.total,
        serverCpuMicros: primary.cpuSeconds * 1e6,
      };
    });
  return {
    workload,
    design: system.design,
    calls,
    keys: size.keys,
    endpoints: size.endpoints,
    concurrency: spec.concurrency,
    warmupCalls: size.warmupCalls,
    durationMs: tally.durationMs,
    spanMs: Number(prepared.spanEnd - prepared.spanStart) / 1e6,
    authorizationsPerSecond: throughput(calls, tally.durationMs),
    ...(roundThroughputs.length > 1 && { roundThroughputs }),
    ...(roundRedisCpuMicrosPerCall.length > 1 && { roundRedisCpuMicrosPerCall }),
    ...(roundScriptMicrosPerCall.length > 1 && { roundScriptMicrosPerCall }),
    latency: summarizeLatencies(tally.latenciesNs),
    processCpuMicrosPerCall: tally.cpuMicros / calls,
    outcomes: tally.outcomes,
    redis: {
      sentPerAuthorization: tally.redisCommandsSent / calls,
      executedPerAuthorization: executedTotal / calls,
      executedByCommand: tally.executedByCommand,
      serverCpuMicrosPerAuthorization: (serverCpuSecondsUsed * 1e6) / calls,
      scriptMicrosPerAuthorization: scriptMicrosUsed / calls,
    },
    snsPublishes: tally.snsPublishes,
    platformCalls: tally.platformCalls,
    flush: { durationMs: tally.flushDurationMs, platformCalls: tally.flushPlatformCalls },
    // An unprotected app meters nothing: none of its calls was allowed by an access check.
    reportedUsage: {
      allowed: system.metered ? prepared.allowedBefore + (tally.outcomes.allow ?? 0) : 0,
      reported,
    },
    ...(prime && { prime }),
    ...(primaries && { primaries }),
    ...(flood && {
      unknownKeyFlood: {
        keys: flood.keys,
        calls: flood.made,
        callers: flood.callers,
        outcomes: flood.outcomes,
        platformCalls: flood.platformCalls,
        gateSeconds: secondsTouched(flood.spansMs),
        ranOut: flood.ranOut,
      },
    }),
  };
}
