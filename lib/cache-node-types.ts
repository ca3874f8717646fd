/**
 * The node families a new ElastiCache (Redis OSS or Valkey) replication group may be created with, and
 * the sizes each offers: the current generation of the CacheNode reference of the ElastiCache API
 * (docs/settings.md cites it). Previous-generation families (t1, m1, m2, m3, c1, r3) take no new
 * clusters, so they are refused too.
 */
const BURSTABLE = ['micro', 'small', 'medium'] as const;
const LARGE_TO = (...extra: string[]) => ['large', 'xlarge', '2xlarge', '4xlarge', ...extra];

export const CACHE_NODE_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  t4g: BURSTABLE,
  t3: BURSTABLE,
  t2: BURSTABLE,
  m7g: LARGE_TO('8xlarge', '12xlarge', '16xlarge'),
  m6g: LARGE_TO('8xlarge', '12xlarge', '16xlarge'),
  m5: LARGE_TO('12xlarge', '24xlarge'),
  m4: LARGE_TO('10xlarge'),
  r7g: LARGE_TO('8xlarge', '12xlarge', '16xlarge'),
  r6g: LARGE_TO('8xlarge', '12xlarge', '16xlarge'),
  r6gd: ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'],
  r5: LARGE_TO('12xlarge', '24xlarge'),
  r4: LARGE_TO('8xlarge', '16xlarge'),
  c7gn: LARGE_TO('8xlarge', '12xlarge', '16xlarge'),
};

/** Why `nodeType` cannot make a new cache, or undefined when it can. */
export function cacheNodeTypeProblem(nodeType: string): string | undefined {
  const [prefix, family, size, ...rest] = nodeType.split('.');
  const sizes = family === undefined ? undefined : CACHE_NODE_FAMILIES[family];
  if (prefix !== 'cache' || rest.length > 0 || sizes === undefined) {
    return `must be an ElastiCache node type such as cache.t4g.micro, of a current family (${Object.keys(CACHE_NODE_FAMILIES).join(', ')}); got ${nodeType}`;
  }
  if (size === undefined || !sizes.includes(size)) {
    return `must be a size cache.${family} comes in (${sizes.join(', ')}); got ${nodeType}`;
  }
  return undefined;
}
