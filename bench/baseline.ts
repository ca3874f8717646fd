/**
 * The ORIGINAL design of this integration (3scale's AWS Lambda authorizer sample), rebuilt on the
 * project's own ports so the two can be compared on the same Redis, platform and SNS latency:
 * - authorizer, per call: GET the key+endpoint entry from Redis; on a hit, await one SNS publish
 *   (the message carries the key and the usage, as the sample's did) and allow; on a miss, authrep
 *   at the platform and SET the answer when it allows;
 * - report function, per message: one authrep (which reports the call), dropping the entry when
 *   the platform no longer allows the key.
 * Header parsing, mapping rules and the platform client are the project's, so the difference measured
 * is the design, not the plumbing.
 */
import { createHash } from 'node:crypto';
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayRequestAuthorizerEvent,
  SQSBatchResponse,
  SQSEvent,
} from 'aws-lambda';
import { endpointOf, restRequestOf } from '../adapters/gateway/rest-request';
import { ensureConnected, type RedisConnection } from '../core/budget/redis-client';
import { extractCredential } from '../core/credentials';
import { compileMappingRules } from '../core/decision/mapping';
import type { Credential, PlatformPort, Usage } from '../core/platform/types';
import { type AccessConfig, ConfigError } from '../core/settings/config';

export interface BaselineDeps {
  readonly config: AccessConfig;
  readonly redis: RedisConnection;
  readonly sns: SNSClient;
  readonly platform: PlatformPort;
}

interface BaselineMessage {
  readonly credential: Credential;
  readonly endpoint: string;
  readonly usage: Usage;
}

const ALLOWED = 'allowed';

function cacheKeyOf(serviceId: string, credential: Credential, endpoint: string): string {
  const digest = createHash('sha256')
    .update(`${serviceId}:${JSON.stringify(credential)}`)
    .digest('hex');
  return `baseline:${digest}:${endpoint}`;
}

function policy(effect: 'Allow' | 'Deny', methodArn: string): APIGatewayAuthorizerResult {
  return {
    principalId: 'baseline',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: methodArn }],
    },
  };
}

export function createBaselineAuthorizer(
  deps: BaselineDeps,
): (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult> {
  const mapper = compileMappingRules(deps.config.mappingRules);
  const { topicArn } = deps.config;
  if (!topicArn)
    throw new ConfigError('topicArn', 'is required: the baseline publishes one message per cache hit');
  return async (event) => {
    const request = restRequestOf(event);
    const extraction = await extractCredential(deps.config, request);
    if (!extraction.ok) throw new Error('Unauthorized');
    const usage = mapper.usageOf(request);
    if (usage === undefined) return policy('Deny', event.methodArn);
    const { credential } = extraction;
    const endpoint = endpointOf(event);
    const cacheKey = cacheKeyOf(deps.config.serviceId, credential, endpoint);
    // The same Lambda-fit client as the project's, which connects on first use.
    await ensureConnected(deps.redis);
    if ((await deps.redis.get(cacheKey)) === ALLOWED) {
      const message: BaselineMessage = { credential, endpoint, usage };
      await deps.sns.send(new PublishCommand({ TopicArn: topicArn, Message: JSON.stringify(message) }));
      return policy('Allow', event.methodArn);
    }
    const outcome = await deps.platform.authrep(credential, usage);
    if (outcome.kind === 'authorized') {
      await deps.redis.set(cacheKey, ALLOWED);
      return policy('Allow', event.methodArn);
    }
    if (outcome.kind === 'denied') return policy('Deny', event.methodArn);
    throw new Error('Unauthorized');
  };
}

export function createBaselineReporter(
  deps: Pick<BaselineDeps, 'config' | 'redis' | 'platform'>,
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const failed = await Promise.all(
      event.Records.map(async (record) => {
        const message = JSON.parse(record.body) as BaselineMessage;
        const outcome = await deps.platform.authrep(message.credential, message.usage);
        if (outcome.kind === 'denied' || outcome.kind === 'invalid_credential') {
          await ensureConnected(deps.redis);
          await deps.redis.del(cacheKeyOf(deps.config.serviceId, message.credential, message.endpoint));
        }
        return outcome.kind === 'misconfigured' || outcome.kind === 'unavailable'
          ? record.messageId
          : undefined;
      }),
    );
    return {
      batchItemFailures: failed
        .filter((id): id is string => id !== undefined)
        .map((itemIdentifier) => ({ itemIdentifier })),
    };
  };
}
