/** The limits of the bench's targets (issue #6 on), read by the targets and by the same-run comparisons. */
export const LIMITS = {
  /** Invariant 1: a cache hit is one Redis round trip; 5% slack for the rare resync or publish-path command. */
  redisCommandsPerHit: 1.05,
  hitPlatformCalls: 0,
  /** One report and one authorize (the cache resync) per credential per report window. */
  flushPlatformCallsPerCredentialWindow: 2,
  /** The project's hot-key p50 must be at most the baseline's divided by this. */
  p50SpeedUp: 5,
  /** The project's hot-key throughput must be at least the baseline's times this. */
  throughputSpeedUp: 3,
  /** SI kilobytes: 300 KB = 300,000 bytes. */
  bundleBytes: 300_000,
  /** Module init on a quiet machine (issue 23). */
  initMs: 60,
  /** Module init at most this fraction of the old one (everything loaded at init), in the same run. */
  initOfEager: 0.5,
  /** A 1-minute load average per core from which the machine counts as loaded: 60 ms is not judged there. */
  loadedPerCore: 0.5,
  /** spread-cluster: each primary's share of the authorizations within this of an even split. */
  primaryShareDeviation: 0.15,
  /** oauth: JWT verification may add at most this to the p50 of a cache hit (issue #12). */
  tokenP50AddedMs: 0.3,
  /** The HTTP API payload 2.0 adapter may add at most this to the p50 of a cache hit (issue #22). */
  httpAdapterP50AddedMs: 0.05,
  /** Usage alerts on may cost the hot key at most this fraction of its throughput (issue #13). */
  alertsThroughputLoss: 0.05,
  /** A throttle may add at most this to the p50 of a cache hit (issue #25). */
  throttleP50AddedMs: 0.05,
  /**
   * ... and at most this fraction to the Redis server's CPU per authorization (INFO cpu, issue #25). The
   * script's own time (INFO commandstats) is printed beside it, a figure only: it shows what the throttle
   * adds inside Redis without the kernel's share of a call, which on a machine of two shared cores spreads
   * the same code's paired rounds from -16 % to +59 %.
   */
  throttleRedisCpuAdded: 0.1,
  /** hot: CloudWatch Logs bytes per authorization, averaged, as the functions log now (issue 34). */
  logBytesPerAuthorization: 50,
  /** A refused flood, over a limit (issue 23) or a throttle (issue 34): Redis commands per refused call at most this. */
  floodRedisCommandsPerCall: 0.01,
  /** A refused flood: its throughput at least this many times the hot key's allowed calls (issue 23). */
  floodThroughputSpeedUp: 3,
  /**
   * The hot key's p50 while made-up keys flood, as a multiple of its p50 alone (issue 23): the flood's 32
   * callers share the hot key's process, event loop and Redis connection here (docs/performance.md).
   */
  unknownFloodHotP50Ratio: 4,
  /**
   * cold: first calls' throughput at least this times the original design's, same run: a floor to hold
   * (issue 34), since in a deployment a first call's platform round trip dwarfs its Redis time.
   */
  coldThroughputOfBaseline: 0.6,
  /** cold: Redis CPU per first call at most this times the original design's, same run (issue 34's floor). */
  coldRedisCpuOfBaseline: 2.5,
  /** spread: Redis CPU per authorization at most this times the original design's, same run (issue 23). */
  spreadRedisCpuOfBaseline: 1.2,
  /** hot: Redis CPU per authorization at most the original design's (issue 34). */
  hotRedisCpuOfBaseline: 1.0,
  /**
   * hot-serial: a cache hit's script time (INFO commandstats, the median of paired rounds) at most this
   * many µs (issue 34): Redis runs scripts on one thread, so 1 / script time is a shard's decisions a second.
   */
  hitScriptMicros: 10,
  /** The plugin may add at most this to the bare application's p50, one caller (issue 30). */
  appP50AddedMs: 0.3,
  /** The plugin's p50 at most this fraction of the original plugin design's, one caller (issue 30). */
  appP50OfOriginal: 0.1,
  /** The plugin's throughput at least this many times the original plugin design's, 32 callers (issue 30). */
  appThroughputSpeedUp: 3,
} as const;

/**
 * Report windows a credential's traffic spans: a window opens with the first publish and lasts
 * `windowSeconds`, so a span of d ms touches at most floor(d / window) + 1 of them. Window 0 means
 * one message per call.
 */
export function windowsSpanned(spanMs: number, windowSeconds: number, calls: number): number {
  if (windowSeconds === 0) return calls;
  return Math.floor(spanMs / (windowSeconds * 1000)) + 1;
}
