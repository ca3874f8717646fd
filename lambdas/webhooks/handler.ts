/**
 * `POST /webhooks/platform?token=...`: the platform's webhooks, outside the authorizer. 3scale's webhook
 * setting is a URL only, so the shared secret travels in its query; it is compared in constant time and
 * never logged. A body that is no event, unreadable XML included, answers 400 saying why (logged as
 * refused, not counted as our error: sending it again cannot mend it); an application the cache does
 * not hold answers 200; a refresh the platform did not answer 503, so the platform delivers it again.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { SERVICE_NAME } from '../../core/observability/metric-names';
import { errorMessage, METRIC } from '../../core/observability/observability';
import {
  applyPlatformEvent,
  eventXmlOf,
  parseEventXml,
  tokenMatches,
  WebhookBodyError,
  type WebhookPorts,
} from '../../core/platform/webhooks';

export { WEBHOOK_PATH, WEBHOOK_ROUTE } from './route';
export const WEBHOOKS_SERVICE_NAME = SERVICE_NAME.webhooks;
const MAX_BODY_BYTES = 256 * 1024;

export interface WebhookHandlerDeps extends WebhookPorts {
  /** The shared secret the webhook URL carries in `token`. */
  readonly token: string;
}

export type WebhookHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

function answer(statusCode: number, message: string): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  };
}

function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const found = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return found?.[1] ?? undefined;
}

export function createWebhookHandler(deps: WebhookHandlerDeps): WebhookHandler {
  return async (event) => {
    if (!tokenMatches(event.queryStringParameters?.token ?? undefined, deps.token)) {
      deps.logger.warn('webhook refused: missing or wrong token');
      return answer(401, 'Unauthorized');
    }
    const raw = event.body ?? '';
    const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    if (Buffer.byteLength(body) > MAX_BODY_BYTES) return answer(413, 'the body is too large');
    try {
      const platformEvent = parseEventXml(eventXmlOf(body, headerOf(event, 'content-type')));
      const outcome = await applyPlatformEvent(deps, platformEvent);
      if (outcome.kind === 'unanswered') {
        deps.metrics.addMetric(METRIC.webhookFailed, 'Count', 1);
        return answer(503, 'the platform did not answer; send it again');
      }
      return answer(200, outcome.kind);
    } catch (error) {
      if (error instanceof WebhookBodyError) {
        deps.logger.warn('webhook refused: not a webhook event', { reason: error.message });
        return answer(400, `not a webhook event: ${error.message}`);
      }
      deps.logger.error('webhook failed', { error: errorMessage(error) });
      deps.metrics.addMetric(METRIC.webhookFailed, 'Count', 1);
      return answer(503, 'the cache could not be updated; send it again');
    } finally {
      deps.metrics.publishStoredMetrics();
    }
  };
}
