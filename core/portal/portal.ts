/**
 * The developer portal: one handler over every `/portal` route (docs/portal.md). Each route is one entry;
 * a POST that changes anything passes the CSRF checks in its route. The portal answers no CORS preflight.
 */
import { accountWebhook } from './account-events';
import { confirm, confirmPage, homePage, invite, signIn, signOut, signUp } from './account-routes';
import {
  applicationPage,
  createApplication,
  deleteApplication,
  deleteOldKeys,
  finishDueRolls,
  rollKey,
} from './application-routes';
import { json, PortalContext, type PortalDeps } from './context';
import { CREDENTIALS_FILE, docsCredentials, docsPage } from './docs-routes';
import { FormTooLargeError, type PortalRequest, type PortalResponse } from './http';
import type { Session } from './sessions';

type Route = (
  ctx: PortalContext,
  request: PortalRequest,
  session: Session | undefined,
) => Promise<PortalResponse> | PortalResponse;

/** Every route, `METHOD /path` under the portal ('' is the portal's own page). */
export const PORTAL_ROUTES: Readonly<Record<string, Route>> = {
  'GET ': homePage,
  'POST /signup': (ctx, request) => signUp(ctx, request),
  'POST /signin': (ctx, request) => signIn(ctx, request),
  'GET /confirm': (ctx, request) => confirmPage(ctx, request),
  'POST /confirm': (ctx, request) => confirm(ctx, request),
  'POST /signout': signOut,
  'GET /app': applicationPage,
  'POST /app': createApplication,
  'POST /app/roll': rollKey,
  'POST /app/old-keys': deleteOldKeys,
  'POST /app/delete': deleteApplication,
  'GET /docs': docsPage,
  [`GET /docs/${CREDENTIALS_FILE}`]: (ctx, _request, session) => docsCredentials(ctx, session),
  'POST /hooks/account': (ctx, request) => accountWebhook(ctx, request),
  'POST /invitations': (ctx, request) => invite(ctx, request),
};

export type PortalHandler = (request: PortalRequest) => Promise<PortalResponse>;

export function createPortal(deps: PortalDeps): PortalHandler {
  const ctx = new PortalContext(deps);
  return async (request) => {
    const route = PORTAL_ROUTES[`${request.method} ${request.path.replace(/\/$/, '')}`];
    if (route === undefined) return json(404, { message: 'Not Found' });
    try {
      await finishDueRolls(ctx).catch((error) =>
        deps.logger.warn('portal: due key deletions failed', { error: (error as Error).message }),
      );
      return await route(ctx, request, await ctx.sessions.of(request));
    } catch (error) {
      if (error instanceof FormTooLargeError) return json(413, { message: error.message });
      throw error;
    }
  };
}
