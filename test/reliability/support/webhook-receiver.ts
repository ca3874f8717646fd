/**
 * The webhook receiver as `npm start` wires it (local/stack.ts): the product's webhook function behind
 * the local gateway's open `POST /webhooks/platform` method, with its own Redis connection and platform
 * client (its own Lambda), and the platform told to send its webhooks there.
 */
import { randomBytes } from 'node:crypto';
import type { WebhookPorts } from '../../../core/platform/webhooks';
import { createWebhookHandler, WEBHOOK_PATH, WEBHOOK_ROUTE } from '../../../lambdas/webhooks/handler';
import { type LocalGateway, openMethods, startGateway } from '../../../local/gateway';
import type { RunningPlatform } from '../../../local/platform';
import { LOCAL_API_ID, LOCAL_STAGE } from '../../../local/stack';
import type { Authorizer } from './answers';

export interface WebhookReceiver {
  readonly gateway: LocalGateway;
  stop(): Promise<void>;
}

/** Starts the receiver and adds its URL (with a new shared secret) to the platform's webhook URLs. */
export async function startWebhookReceiver(
  ports: WebhookPorts,
  platform: RunningPlatform,
  authorizer: Authorizer,
): Promise<WebhookReceiver> {
  const token = randomBytes(24).toString('base64url');
  const gateway = await startGateway({
    apis: [
      {
        basePath: '',
        apiId: LOCAL_API_ID,
        stage: LOCAL_STAGE,
        methods: openMethods([WEBHOOK_ROUTE], createWebhookHandler({ ...ports, token })),
        identitySources: [],
        authorizer,
      },
    ],
  });
  platform.addWebhookUrl(`${gateway.url}${WEBHOOK_PATH}?token=${token}`);
  return { gateway, stop: () => gateway.stop() };
}
