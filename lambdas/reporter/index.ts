/**
 * Lambda entries of the reporter (SQS) and of the scheduled sweep. Configuration, secrets and clients
 * are built once per container; a start-up failure fails the invocation, so SQS delivers the batch
 * again and the next scheduled sweep tries again. A clean stop (SIGTERM, which the shutdown extension
 * registered at module init makes Lambda send) gives back the leases the container still holds, so a
 * live reporter takes their usage at once instead of after the lease (shutdown.ts).
 */

import { SNSClient } from '@aws-sdk/client-sns';
import type { SQSEvent } from 'aws-lambda';
import { createLogger } from '../../adapters/powertools/observability';
import { snsAlertPublisher } from '../../adapters/sns/alert-publisher';
import { SNS_CLIENT_SETTINGS } from '../../adapters/sns/client';
import { ConfigError } from '../../core/settings/config';
import { loadRuntime, oncePerContainer } from '../runtime';
import { exitCleanlyOnSigterm, processShutdown, registerShutdownExtension } from '../shutdown';
import {
  createReporterHandler,
  createSweepHandler,
  REPORTER_SERVICE_NAME,
  type ReporterDeps,
} from './handler';

const reporterDeps = oncePerContainer(async (): Promise<ReporterDeps> => {
  const { redis, ...runtime } = await loadRuntime(REPORTER_SERVICE_NAME, process.env, 'reporter');
  if (!redis) throw new ConfigError('redis.host', 'is required by the reporter');
  const { alertsTopicArn } = runtime.config;
  return {
    ...runtime,
    redis,
    ...(alertsTopicArn && {
      alertPublisher: snsAlertPublisher(new SNSClient(SNS_CLIENT_SETTINGS), alertsTopicArn),
    }),
  };
});

// The handlers built in this container: a clean stop closes them (building none).
const built: Array<{ close(): Promise<void> }> = [];
const closedOnShutdown = <T extends { close(): Promise<void> }>(handler: T): T => {
  built.push(handler);
  return handler;
};
const reporter = oncePerContainer(async () => closedOnShutdown(createReporterHandler(await reporterDeps())));
const sweep = oncePerContainer(async () => closedOnShutdown(createSweepHandler(await reporterDeps())));
processShutdown.add(() => Promise.all(built.map((handler) => handler.close())));
// At module init: an internal extension registers before the runtime's first `next` or not at all.
const logger = createLogger(REPORTER_SERVICE_NAME);
registerShutdownExtension(logger);
exitCleanlyOnSigterm(logger);

export const handler = async (event: SQSEvent) => (await reporter())(event);

/** Invoked by the schedule; the scheduled event carries nothing the sweep needs. */
export const sweepHandler = async () => (await sweep())();
