/**
 * The developer portal on a local gateway (docs/portal.md): `/portal` on the API's own origin, the same
 * handler the Lambda runs, its e-mails to the local mail sink, its admin token the gateway's
 * (the local platform takes the provider key as an access token), its signing key and webhook secret new
 * at each start.
 */
import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../core/budget/redis-client';
import type { LogPort } from '../core/observability/observability';
import type { PlatformClient } from '../core/platform/client';
import { AdminClient } from '../core/portal/admin-client';
import { accessCacheNotice } from '../core/portal/cache-notice';
import type { MailPort } from '../core/portal/mail';
import { createPortal } from '../core/portal/portal';
import type { PortalSettings } from '../core/portal/settings';
import type { AccessConfig } from '../core/settings/config';
import type { DocsHandler } from '../lambdas/docs/handler';
import { PORTAL_PATH } from '../lambdas/portal/env';
import { createPortalHandler, PORTAL_ROUTES } from '../lambdas/portal/handler';
import { redisGuessCounter } from '../lambdas/token/guess-limit';
import { type ApiMethod, openMethods } from './gateway';
import type { StackDefinition } from './stack-file';

export interface LocalPortalParts {
  readonly config: AccessConfig;
  readonly settings: PortalSettings;
  /** Whether this stack issues the API's OAuth tokens itself. */
  readonly builtInIssuer: boolean;
  readonly redis: RedisConnection;
  readonly platform: PlatformClient;
  readonly mail: MailPort;
  readonly docs: DocsHandler;
  readonly logger: LogPort;
  readonly now: () => number;
  /** The API's mount on the gateway: base path and stage path. */
  readonly mount: string;
}

export interface LocalPortal {
  readonly methods: ApiMethod[];
  /** The account webhook's path and query under the API (its token is a secret: never log it). */
  readonly webhookPath: string;
}

export function localPortal(parts: LocalPortalParts): LocalPortal {
  const { config, logger } = parts;
  const adminToken = config.adminAccessToken ?? config.platformCredential ?? '';
  const webhookToken = randomBytes(24).toString('base64url');
  const portal = createPortal({
    settings: parts.settings,
    serviceId: config.serviceId,
    credentialMode: config.credentialMode,
    builtInIssuer: parts.builtInIssuer,
    admin: new AdminClient({ url: config.adminApiUrl ?? config.platformUrl, accessToken: adminToken }),
    redis: parts.redis,
    counter: redisGuessCounter(parts.redis),
    mail: parts.mail,
    signingKey: randomBytes(32).toString('base64url'),
    adminToken,
    webhookToken,
    usage: (credential) => parts.platform.authorize(credential),
    cache: accessCacheNotice(parts.redis, config, parts.now),
    logger,
    now: parts.now,
  });
  const handler = createPortalHandler({
    portal: async () => portal,
    docs: () => parts.docs,
    logger,
    base: `${parts.mount}${PORTAL_PATH}`,
  });
  return {
    methods: openMethods(PORTAL_ROUTES, handler),
    webhookPath: `${PORTAL_PATH}/hooks/account?token=${webhookToken}`,
  };
}

/** The stack with the local platform's "account approval required" on (`npm start -- --approval`). */
export function withAccountApproval(definition: StackDefinition): StackDefinition {
  const { platform } = definition;
  if (platform?.admin === undefined) return definition;
  const settings = { ...platform.admin.settings, accountApprovalRequired: true };
  return { ...definition, platform: { ...platform, admin: { ...platform.admin, settings } } };
}
