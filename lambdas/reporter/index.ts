/**
 * Lambda entries of the reporter (SQS) and of the scheduled sweep. Configuration, secrets and clients
 * are built once per container; a start-up failure fails the invocation, so SQS delivers the batch
 * again and the next scheduled sweep tries again.
 */

import { SNSClient } from '@aws-sdk/client-sns';
import type { SQSEvent } from 'aws-lambda';
import { snsAlertPublisher } from '../../adapters/sns/alert-publisher';
import { SNS_CLIENT_SETTINGS } from '../../adapters/sns/client';
import { ConfigError } from '../../core/settings/config';
import { loadRuntime, oncePerContainer } from '../runtime';
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

const reporter = oncePerContainer(async () => createReporterHandler(await reporterDeps()));
const sweep = oncePerContainer(async () => createSweepHandler(await reporterDeps()));

export const handler = async (event: SQSEvent) => (await reporter())(event);

/** Invoked by the schedule; the scheduled event carries nothing the sweep needs. */
export const sweepHandler = async () => (await sweep())();
