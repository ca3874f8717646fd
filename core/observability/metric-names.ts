/**
 * The names the Lambdas publish their metrics under, as plain data: the handlers publish them through
 * Powertools (observability.ts), and the CDK alarms (lib/) watch the same names without loading Powertools.
 */

/** CloudWatch namespace of every metric of the two Lambdas. */
export const METRICS_NAMESPACE = 'ApiAccessManagement';

/**
 * The CloudWatch dimension (besides `service`) of the counts kept per platform metric: its value is a
 * metric's system name, one of the service's few; never an application, a credential or a path.
 */
export const METRIC_DIMENSION = 'metric';

/**
 * The CloudWatch dimension (besides `service`) of every metric, telling the instances in one account and
 * Region apart (two services, or dev beside prod): `<service id>/<instance name or stack name>`, set by the
 * construct (METRICS_INSTANCE). Alarms and the dashboard read their own instance only.
 */
export const INSTANCE_DIMENSION = 'instance';

export const METRIC = {
  cacheHit: 'CacheHit',
  cacheMiss: 'CacheMiss',
  firstCallWaitTimedOut: 'FirstCallWaitTimedOut',
  negativeCacheHit: 'NegativeCacheHit',
  cacheUnavailable: 'CacheUnavailable',
  /**
   * Of CacheUnavailable: the hot-path script may have run (a timeout, a connection closed after the
   * write), so the platform's authrep may count the call a second time (command-fate.ts).
   */
  cacheAnswerLost: 'CacheAnswerLost',
  cacheWriteFailed: 'CacheWriteFailed',
  malformedCredential: 'MalformedCredential',
  noMappingRule: 'NoMappingRule',
  platformCall: 'PlatformCall',
  platformUnavailable: 'PlatformUnavailable',
  platformMisconfigured: 'PlatformMisconfigured',
  /** A first call of a credential never seen, refused: the bound of such platform calls per second was reached. */
  platformBusy: 'PlatformBusy',
  limitsExceeded: 'LimitsExceeded',
  /** A refusal (over a limit, or a credential the platform refused) answered from the instance's memory. */
  refusedFromMemory: 'RefusedFromMemory',
  softLimitExceeded: 'SoftLimitExceeded',
  /** A throttle of the plan refused the call (docs/throttling.md). */
  rateLimited: 'RateLimited',
  reportPublished: 'ReportPublished',
  reportPublishFailed: 'ReportPublishFailed',
  usageNotRecorded: 'UsageNotRecorded',
  reportedTransactions: 'ReportedTransactions',
  reportedUnverified: 'ReportedUnverified',
  webhookApplied: 'WebhookApplied',
  /** The webhook receiver answered 503: the platform gave no answer to the refresh, or Redis failed. */
  webhookFailed: 'WebhookFailed',
  reportFailed: 'ReportFailed',
  usageDiscarded: 'UsageDiscarded',
  usageRejected: 'UsageRejected',
  flushBusy: 'FlushBusy',
  /** A batch a dead or failed reporter left in flight, marked sent: acknowledged, never sent again. */
  batchSettledByMark: 'BatchSettledByMark',
  /** A batch a report may have carried (no sent mark) sent again: the platform may count it twice. */
  batchResentMaybeSent: 'BatchResentMaybeSent',
  /** The units of those batches: at most this many counted twice. */
  unitsResentMaybeSent: 'UnitsResentMaybeSent',
  /** A batch the platform accepted whose sent mark Redis did not take within the settle's retries. */
  batchSentUnmarked: 'BatchSentUnmarked',
  flushUnreadable: 'FlushUnreadable',
  resyncFailed: 'ResyncFailed',
  sweepFlushed: 'SweepFlushed',
  authorizerError: 'AuthorizerError',
  /** Per platform metric (METRIC_DIMENSION): calls allowed that map to the metric. */
  allowed: 'Allowed',
  /** Per platform metric (METRIC_DIMENSION): calls that map to the metric and were refused (403 or 401). */
  denied: 'Denied',
  /** Per platform metric (METRIC_DIMENSION): usage alerts published on a limit of the metric. */
  alertPublished: 'AlertPublished',
  alertPublishFailed: 'AlertPublishFailed',
  /** The SOAP proxy failed on a request (its own error, answered with a Receiver Fault). */
  soapProxyError: 'SoapProxyError',
} as const;

/**
 * Counts of the ordinary outcomes of a call, one or more per call: summed in each instance's memory and
 * written at most once per `metricsFlushSeconds` (observability.ts), so a call writes no log line of its
 * own. Every other metric (errors, and the ones the alarms read) is written at the end of the invocation
 * that counted it.
 */
export const AGGREGATED_COUNTS: ReadonlySet<string> = new Set([
  METRIC.allowed,
  METRIC.denied,
  METRIC.cacheHit,
  METRIC.reportPublished,
  METRIC.cacheMiss,
  METRIC.negativeCacheHit,
  METRIC.limitsExceeded,
  METRIC.refusedFromMemory,
  METRIC.rateLimited,
  METRIC.softLimitExceeded,
  METRIC.malformedCredential,
  METRIC.noMappingRule,
  METRIC.platformCall,
  METRIC.platformBusy,
]);

/** Powertools' `service` dimension of each Lambda's metrics and logs. */
export const SERVICE_NAME = {
  authorizer: 'access-authorizer',
  reporter: 'access-reporter',
  soapProxy: 'soap-access-proxy',
  webhooks: 'platform-webhooks',
  portal: 'developer-portal',
} as const;
