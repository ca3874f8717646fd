/**
 * Prices a synthesized CloudFormation template from the price list (scripts/cost/price-list.json): the
 * fixed monthly cost, the part that is paid with no traffic at all. Every resource type of the template is
 * either priced here or listed free in the price list; any other is an error, so a new billable resource
 * cannot slip into the bill unpriced.
 */
import priceList from './price-list.json';

export type PriceList = typeof priceList;

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

export interface Template {
  readonly Resources: Record<string, Resource>;
}

/** One line of the bill: what, how many, and its monthly cost in the list's currency. */
export interface CostLine {
  readonly item: string;
  readonly quantity: number;
  readonly monthly: number;
}

export class UnpricedResourceError extends Error {
  constructor(readonly resourceTypes: readonly string[]) {
    super(
      `the price list (scripts/cost/price-list.json) neither prices nor lists as free: ${resourceTypes.join(', ')}. Add its price (and a rule in scripts/cost/price.ts), or list it under free with why`,
    );
    this.name = 'UnpricedResourceError';
  }
}

type Pricer = (resource: Resource, list: PriceList) => CostLine[];

const hourly = (list: PriceList, rate: number) => rate * list.hoursPerMonth;

function lookup<T>(table: Record<string, T>, key: string, type: string): T {
  const value = table[key];
  if (value === undefined) throw new UnpricedResourceError([`${type} ${key}`]);
  return value;
}

/** Nodes of a replication group: shards × (1 + replicas), or its cache clusters. */
function cacheNodes(properties: Record<string, unknown>): number {
  const shards = properties.NumNodeGroups as number | undefined;
  if (shards !== undefined) return shards * (1 + ((properties.ReplicasPerNodeGroup as number) ?? 0));
  return (properties.NumCacheClusters as number | undefined) ?? 1;
}

/** Nodes of a MemoryDB cluster: shards × (1 + replicas). */
function memoryDbNodes(properties: Record<string, unknown>): number {
  const shards = (properties.NumShards as number | undefined) ?? 1;
  return shards * (1 + ((properties.NumReplicasPerShard as number | undefined) ?? 1));
}

/** Metrics an alarm watches: its one metric, or each metric of its math expression. */
function alarmMetrics(properties: Record<string, unknown>): number {
  const metrics = properties.Metrics as Array<{ MetricStat?: unknown }> | undefined;
  return metrics ? metrics.filter((metric) => metric.MetricStat !== undefined).length : 1;
}

const PRICERS: Record<string, Pricer> = {
  'AWS::EC2::NatGateway': (_resource, list) => [
    { item: 'NAT gateway', quantity: 1, monthly: hourly(list, list.hourly.natGateway) },
  ],
  'AWS::EC2::EIP': (_resource, list) => [
    { item: 'public IPv4 address', quantity: 1, monthly: hourly(list, list.hourly.publicIpv4Address) },
  ],
  'AWS::EC2::Instance': ({ Properties = {} }, list) => {
    const type = String(Properties.InstanceType);
    const rate = lookup(list.hourly.ec2Instance as Record<string, number>, type, 'AWS::EC2::Instance');
    return [
      { item: `EC2 ${type} (NAT instance)`, quantity: 1, monthly: hourly(list, rate) },
      // An instance in a public subnet has a public IPv4 address, billed like any other.
      { item: 'public IPv4 address', quantity: 1, monthly: hourly(list, list.hourly.publicIpv4Address) },
    ];
  },
  'AWS::ElastiCache::ReplicationGroup': ({ Properties = {} }, list) => {
    const engine = String(Properties.Engine ?? 'redis');
    const type = String(Properties.CacheNodeType);
    const rates = lookup(list.hourly.cacheNode as Record<string, Record<string, number>>, engine, 'engine');
    const nodes = cacheNodes(Properties);
    const rate = lookup(rates, type, `AWS::ElastiCache::ReplicationGroup ${engine}`);
    return [
      { item: `ElastiCache ${engine} ${type} node`, quantity: nodes, monthly: nodes * hourly(list, rate) },
    ];
  },
  'AWS::ElastiCache::ServerlessCache': ({ Properties = {} }, list) => {
    const engine = String(Properties.Engine ?? 'redis');
    const rate = lookup(
      list.hourly.serverlessCacheMinimumStorage as Record<string, number>,
      engine,
      'engine',
    );
    return [
      {
        item: `ElastiCache Serverless ${engine} (minimum storage)`,
        quantity: 1,
        monthly: hourly(list, rate),
      },
    ];
  },
  'AWS::MemoryDB::Cluster': ({ Properties = {} }, list) => {
    const engine = String(Properties.Engine ?? 'redis');
    const type = String(Properties.NodeType);
    const rates = lookup(
      list.hourly.memoryDbNode as Record<string, Record<string, number>>,
      engine,
      'engine',
    );
    const nodes = memoryDbNodes(Properties);
    const rate = lookup(rates, type, `AWS::MemoryDB::Cluster ${engine}`);
    return [
      { item: `MemoryDB ${engine} ${type} node`, quantity: nodes, monthly: nodes * hourly(list, rate) },
    ];
  },
  'AWS::SecretsManager::Secret': (_resource, list) => [
    { item: 'Secrets Manager secret', quantity: 1, monthly: list.monthly.secret },
  ],
  'AWS::KMS::Key': (_resource, list) => [{ item: 'KMS key', quantity: 1, monthly: list.monthly.kmsKey }],
  'AWS::CloudWatch::Alarm': ({ Properties = {} }, list) => {
    const metrics = alarmMetrics(Properties);
    return [
      { item: 'CloudWatch alarm metric', quantity: metrics, monthly: metrics * list.monthly.alarmMetric },
    ];
  },
  'AWS::CloudWatch::Dashboard': (_resource, list) => [
    { item: 'CloudWatch dashboard', quantity: 1, monthly: list.monthly.dashboard },
  ],
};

/** The platform metrics the mapping rules count on (hits without rules), from the functions' environment. */
function platformMetrics(template: Template): Set<string> {
  const metrics = new Set<string>();
  for (const resource of Object.values(template.Resources)) {
    const variables = (
      resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
    )?.Variables;
    const rules = variables?.MAPPING_RULES;
    if (typeof rules !== 'string') continue;
    for (const rule of JSON.parse(rules) as Array<{ metric: string }>) metrics.add(rule.metric);
  }
  if (metrics.size === 0) metrics.add('hits');
  return metrics;
}

/** The instances of the template (METRICS_INSTANCE): each publishes its own series of every metric. */
function instances(template: Template): number {
  const names = new Set<string>();
  for (const resource of Object.values(template.Resources)) {
    const variables = (
      resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
    )?.Variables;
    if (typeof variables?.METRICS_INSTANCE === 'string') names.add(variables.METRICS_INSTANCE);
  }
  return Math.max(names.size, 1);
}

/** The custom metrics the functions publish whatever the traffic, per instance. */
function customMetricLine(template: Template, list: PriceList): CostLine {
  const count =
    instances(template) *
    (list.customMetrics.steady.length +
      list.customMetrics.perPlatformMetric.length * platformMetrics(template).size);
  return { item: 'CloudWatch custom metric', quantity: count, monthly: count * list.monthly.customMetric };
}

/** The bill's lines, like items summed, and the total; throws UnpricedResourceError naming unknown types. */
export function priceTemplate(
  template: Template,
  list: PriceList = priceList,
): {
  lines: CostLine[];
  total: number;
} {
  const free = new Set(list.free.types);
  const resources = Object.values(template.Resources);
  const unknown = [
    ...new Set(resources.map((r) => r.Type).filter((type) => !(type in PRICERS) && !free.has(type))),
  ];
  if (unknown.length > 0) throw new UnpricedResourceError(unknown.sort());
  const byItem = new Map<string, CostLine>();
  const lines = [
    ...resources.flatMap((resource) => PRICERS[resource.Type]?.(resource, list) ?? []),
    customMetricLine(template, list),
  ];
  for (const line of lines) {
    const sum = byItem.get(line.item);
    byItem.set(
      line.item,
      sum ? { ...line, quantity: sum.quantity + line.quantity, monthly: sum.monthly + line.monthly } : line,
    );
  }
  const summed = [...byItem.values()].sort((a, b) => b.monthly - a.monthly);
  return { lines: summed, total: summed.reduce((total, line) => total + line.monthly, 0) };
}
