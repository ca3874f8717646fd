/** The Redis and the world a chaos or soak test starts, stopped after each test whatever its outcome. */
import { afterEach } from 'vitest';
import type { ChaosRedis } from './chaos-redis';
import type { ChaosWorld } from './chaos-world';

export interface ChaosRun {
  redis?: ChaosRedis;
  world?: ChaosWorld;
}

export function stoppedAfterEach(): ChaosRun {
  const run: ChaosRun = {};
  afterEach(async () => {
    await run.world?.stop();
    await run.redis?.stop();
    run.world = undefined;
    run.redis = undefined;
  });
  return run;
}
