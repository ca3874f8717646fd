/**
 * The reporter: SNS report messages delivered by SQS (raw message delivery, partial batch responses),
 * and the sweep for usage whose message was lost. Both flush through the same core (reporting.ts).
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createLogger, createMetrics } from '../../adapters/powertools/observability';
import type { RedisConnection } from '../../core/budget/redis-client';
import { credentialIdPrefix } from '../../core/credentials';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import { errorMessage, type LogPort, type MetricsPort } from '../../core/observability/observability';
import { ApplicationDirectory } from '../../core/platform/application-directory';
import type { PlatformPort } from '../../core/platform/types';
import { type AlertPublisher, UsageAlerts } from '../../core/reporting/alerts';
import type { ReportingDeps } from '../../core/reporting/flush-types';
import { parseReportMessage } from '../../core/reporting/message';
import { createUsageFlusher } from '../../core/reporting/reporting';
import { type SweepResult, sweepMinAgeMs, sweepUnreported } from '../../core/reporting/sweep';
import type { AccessConfig } from '../../core/settings/config';

export const REPORTER_SERVICE_NAME = SERVICE_NAME.reporter;

export interface ReporterDeps {
  readonly config: AccessConfig;
  readonly redis: RedisConnection;
  readonly platform: PlatformPort;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
  readonly logger?: LogPort;
  readonly metrics?: MetricsPort;
  /** Where usage alerts go; without one (or without alert levels) the reporter computes none. */
  readonly alertPublisher?: AlertPublisher;
  /** Sweep only: flush usage older than this; default a few report windows (sweepMinAgeMs), 0 flushes all. */
  readonly sweepMinAgeMs?: number;
}

/** `close()`: a clean stop waits for the flushes under way and gives back the leases still held. */
export type ReporterHandler = ((event: SQSEvent) => Promise<SQSBatchResponse>) & Closable;
export type SweepHandler = (() => Promise<SweepResult>) & Closable;

interface Closable {
  close(): Promise<void>;
}

function reportingDeps(deps: ReporterDeps): ReportingDeps {
  const logger = deps.logger ?? createLogger(REPORTER_SERVICE_NAME);
  const metrics = deps.metrics ?? createMetrics(REPORTER_SERVICE_NAME);
  const { config, redis, alertPublisher } = deps;
  const alerts =
    alertPublisher && config.alertLevels.length > 0
      ? new UsageAlerts({
          serviceId: config.serviceId,
          levels: config.alertLevels,
          redis,
          publisher: alertPublisher,
          logger,
          metrics,
          ...(config.adminApiUrl !== undefined &&
            config.adminAccessToken !== undefined && {
              directory: new ApplicationDirectory({
                serviceId: config.serviceId,
                admin: { url: config.adminApiUrl, accessToken: config.adminAccessToken },
                redis,
                logger,
              }),
            }),
        })
      : undefined;
  return {
    config,
    redis,
    platform: deps.platform,
    now: deps.now ?? Date.now,
    logger,
    metrics,
    ...(alerts && { onResynced: alerts.observe }),
  };
}

/**
 * Records whose credential could not be reported come back as batch item failures, so SQS delivers
 * them again (and at last to the dead-letter queue); so do messages that cannot be read.
 */
export function createReporterHandler(deps: ReporterDeps): ReporterHandler {
  const core = reportingDeps(deps);
  const flusher = createUsageFlusher(core);
  const handle = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: SQSBatchItemFailure[] = [];
    const recordsOf = new Map<string, string[]>();
    for (const record of event.Records) {
      try {
        const message = parseReportMessage(record.body);
        if (message.serviceId !== deps.config.serviceId) {
          throw new Error(
            `message for service ${message.serviceId}, this reporter serves ${deps.config.serviceId}`,
          );
        }
        recordsOf.set(message.credentialId, [
          ...(recordsOf.get(message.credentialId) ?? []),
          record.messageId,
        ]);
      } catch (error) {
        core.logger.error('report message refused: left for the dead-letter queue', {
          messageId: record.messageId,
          error: errorMessage(error),
        });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    try {
      const result = await flusher.flush([...recordsOf.keys()]);
      for (const credentialId of [...result.failed, ...result.busy, ...result.unreadable]) {
        core.logger.info('credential not reported in this batch: its message will come again', {
          credential: credentialIdPrefix(credentialId),
        });
        for (const messageId of recordsOf.get(credentialId) ?? [])
          failures.push({ itemIdentifier: messageId });
      }
      // Reported, but an alert is still to publish: the message comes again after its visibility
      // timeout, and that flush publishes the alert kept in Redis.
      const failedIds = new Set([...result.failed, ...result.busy, ...result.unreadable]);
      for (const credentialId of result.retry.filter((id) => !failedIds.has(id))) {
        for (const messageId of recordsOf.get(credentialId) ?? [])
          failures.push({ itemIdentifier: messageId });
      }
      return { batchItemFailures: failures };
    } finally {
      core.metrics.publishStoredMetrics();
    }
  };
  return Object.assign(handle, { close: () => flusher.close() });
}

export function createSweepHandler(deps: ReporterDeps): SweepHandler {
  const core = reportingDeps(deps);
  const flusher = createUsageFlusher(core);
  const minAgeMs = deps.sweepMinAgeMs ?? sweepMinAgeMs(deps.config);
  const sweep = async (): Promise<SweepResult> => {
    try {
      return await sweepUnreported(core, flusher, minAgeMs);
    } finally {
      core.metrics.publishStoredMetrics();
    }
  };
  return Object.assign(sweep, { close: () => flusher.close() });
}
