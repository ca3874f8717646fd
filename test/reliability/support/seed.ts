/**
 * Seeds of the randomized reliability tests. CI runs a fixed seed so a red build is reproducible from
 * its log; RELIABILITY_SEED=<n> replays a printed seed or explores a new one.
 */
export const DEFAULT_SEED = 20_240_611;

export function reliabilitySeed(testName: string): number {
  const fromEnv = process.env.RELIABILITY_SEED;
  const seed = fromEnv === undefined || fromEnv === '' ? DEFAULT_SEED : Number(fromEnv);
  if (!Number.isSafeInteger(seed)) throw new Error(`RELIABILITY_SEED must be an integer (got ${fromEnv})`);
  console.log(`[${testName}] seed ${seed} (replay: RELIABILITY_SEED=${seed})`);
  return seed;
}

/** A small seeded PRNG (mulberry32) for the scripted runs that are not fast-check properties. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
