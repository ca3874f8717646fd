/** The plugin against the bare application and the original plugin design, same run (issue 30). */
import { LIMITS } from './limits';
import { fixed, grouped, signed, type TargetResult } from './target-result';

/** The application workloads (issue 30): the app behind the plugin, bare, and behind the original plugin design. */
export interface AppFigures {
  /** app-serial, one caller: the p50 of each design (ms). */
  readonly serial?: { readonly unprotected: number; readonly project: number; readonly baseline: number };
  /** app-hot, 32 callers. */
  readonly hot?: {
    readonly projectPerSecond: number;
    readonly baselinePerSecond: number;
    /** Commands the plugin's Redis connection sent per allowed call (cache hits: the key was primed). */
    readonly redisCommandsPerCall: number;
  };
  /** app-refused: commands the plugin's Redis connection sent per refused call of a key over its limit. */
  readonly refusedRedisCommandsPerCall?: number;
}

export function appTargets({ serial, hot, refusedRedisCommandsPerCall }: AppFigures): TargetResult[] {
  const targets: TargetResult[] = [];
  if (hot) {
    const ratio = hot.projectPerSecond / hot.baselinePerSecond;
    targets.push(
      {
        id: 'app-hit-redis',
        target: `app behind the plugin, cache hit: Redis commands per call <= ${LIMITS.redisCommandsPerHit}`,
        measured: fixed(hot.redisCommandsPerCall, 3),
        pass: hot.redisCommandsPerCall <= LIMITS.redisCommandsPerHit,
      },
      {
        id: 'app-throughput',
        target: `app, 32 callers: the plugin's throughput >= ${LIMITS.appThroughputSpeedUp} x the original plugin design's`,
        measured: `${grouped(hot.projectPerSecond)}/s against ${grouped(hot.baselinePerSecond)}/s (${fixed(ratio)}x)`,
        pass: hot.projectPerSecond >= LIMITS.appThroughputSpeedUp * hot.baselinePerSecond,
      },
    );
  }
  if (refusedRedisCommandsPerCall !== undefined) {
    targets.push({
      id: 'app-refusal-redis',
      target: `app behind the plugin, a key over its limit that keeps calling: Redis commands per refusal <= ${LIMITS.floodRedisCommandsPerCall}`,
      measured: fixed(refusedRedisCommandsPerCall, 4),
      pass: refusedRedisCommandsPerCall <= LIMITS.floodRedisCommandsPerCall,
    });
  }
  if (serial) {
    const added = serial.project - serial.unprotected;
    targets.push(
      {
        id: 'app-p50-added',
        target: `app, one caller: p50 the plugin adds to the bare app <= ${LIMITS.appP50AddedMs} ms`,
        measured: `${signed(added, 3)} ms (${fixed(serial.project, 3)} against ${fixed(serial.unprotected, 3)} ms)`,
        pass: added <= LIMITS.appP50AddedMs,
      },
      {
        id: 'app-p50-vs-original',
        target: `app, one caller: the plugin's p50 <= ${LIMITS.appP50OfOriginal} x the original plugin design's`,
        measured:
          `${fixed(serial.project, 3)} against ${fixed(serial.baseline, 3)} ms ` +
          `(${fixed(serial.baseline / serial.project, 1)}x faster)`,
        pass: serial.project <= LIMITS.appP50OfOriginal * serial.baseline,
      },
    );
  }
  return targets;
}
