/**
 * Lambda entry of the authorizer. The configuration, secrets and clients are built once per
 * container, on the first invocation; a container that cannot start refuses calls with a Deny
 * (never a 5xx) and logs why, then tries again on the next invocation. The AWS SDK is loaded on first
 * use only (the SNS client on the first publish): module init, which every cold start pays, stays small.
 */

import { type AuthorizerEvent, formatOf } from '../../adapters/gateway';
import { createLogger } from '../../adapters/powertools/observability';
import { SNS_CLIENT_SETTINGS, snsClientOnFirstUse } from '../../adapters/sns/client';
import { errorMessage } from '../../core/observability/observability';
import { loadRuntime, oncePerContainer } from '../runtime';
import { AUTHORIZER_SERVICE_NAME, type AuthorizerHandler, createAuthorizerHandler } from './handler';

const startupLogger = createLogger(AUTHORIZER_SERVICE_NAME);

const authorizer = oncePerContainer(async (): Promise<AuthorizerHandler> => {
  const runtime = await loadRuntime(AUTHORIZER_SERVICE_NAME);
  return createAuthorizerHandler({ ...runtime, sns: snsClientOnFirstUse(SNS_CLIENT_SETTINGS) });
});

export const handler = (async (event: AuthorizerEvent) => {
  let handle: AuthorizerHandler;
  try {
    handle = await authorizer();
  } catch (error) {
    startupLogger.error('authorizer cannot start', { error: errorMessage(error) });
    return formatOf(event).failureOf(event);
  }
  return handle(event);
}) as AuthorizerHandler;
