/**
 * The routes of the Account Management API a developer portal calls (porta's `config/routes.rb`,
 * `namespace :api`), as a table: method, path, the access it needs (access-tokens.ts) and its handler.
 * The older application routes (suspend, resume, change plan, user key, limits) stay in admin.ts.
 */
import { type Access, authorize } from './access-tokens';
import { changeAccountState, deleteAccount, findAccount, listAccounts, readAccount } from './accounts-api';
import type { AdminContext } from './admin-context';
import {
  acceptApplication,
  createApplication,
  deleteApplication,
  listApplications,
  readApplication,
} from './applications-api';
import { createKey, deleteKey, listKeys } from './keys-api';
import { listPlans } from './plans-api';
import { latestProxyConfig, promoteProxyConfig, showProxyConfig } from './proxy-configs-api';
import { readSettings, updateSettings } from './settings-api';
import { signup } from './signup';
import type { Answer } from './transactor';
import { updateWebhook } from './webhooks-api';

type Handler = (context: AdminContext, match: readonly string[]) => Answer;

interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: RegExp;
  readonly access: Access;
  readonly handle: Handler;
}

const APPLICATIONS = 'accounts/([^/]+)/applications';
const APPLICATION = `${APPLICATIONS}/([^/]+?)`;
const PROXY_CONFIGS = 'services/([^/]+)/proxy/configs/([^/]+)';

const ROUTES: readonly Route[] = [
  { method: 'POST', path: /^signup\.xml$/, access: 'write', handle: signup },
  { method: 'GET', path: /^accounts\.xml$/, access: 'read', handle: listAccounts },
  { method: 'GET', path: /^accounts\/find\.xml$/, access: 'read', handle: findAccount },
  { method: 'GET', path: /^accounts\/(\d+)\.xml$/, access: 'read', handle: readAccount },
  { method: 'DELETE', path: /^accounts\/(\d+)\.xml$/, access: 'admin-write', handle: deleteAccount },
  {
    method: 'PUT',
    path: /^accounts\/(\d+)\/(approve|reject)\.xml$/,
    access: 'admin-write',
    handle: changeAccountState,
  },
  {
    method: 'PUT',
    path: /^accounts\/(\d+)\/(make_pending)\.xml$/,
    access: 'write',
    handle: changeAccountState,
  },
  { method: 'GET', path: /^settings\.json$/, access: 'read', handle: readSettings },
  { method: 'PUT', path: /^settings\.json$/, access: 'write', handle: updateSettings },
  { method: 'PUT', path: /^webhooks\.json$/, access: 'write', handle: updateWebhook },
  { method: 'GET', path: /^application_plans\.xml$/, access: 'read', handle: listPlans },
  {
    method: 'GET',
    path: new RegExp(`^${PROXY_CONFIGS}/latest\\.json$`),
    access: 'read',
    handle: latestProxyConfig,
  },
  {
    method: 'GET',
    path: new RegExp(`^${PROXY_CONFIGS}/(\\d+)\\.json$`),
    access: 'read',
    handle: showProxyConfig,
  },
  {
    method: 'POST',
    path: new RegExp(`^${PROXY_CONFIGS}/(\\d+)/promote\\.json$`),
    access: 'write',
    handle: promoteProxyConfig,
  },
  { method: 'GET', path: /^services\/([^/]+)\/application_plans\.xml$/, access: 'read', handle: listPlans },
  { method: 'GET', path: new RegExp(`^${APPLICATIONS}\\.xml$`), access: 'read', handle: listApplications },
  { method: 'POST', path: new RegExp(`^${APPLICATIONS}\\.xml$`), access: 'write', handle: createApplication },
  { method: 'GET', path: new RegExp(`^${APPLICATION}\\.xml$`), access: 'read', handle: readApplication },
  {
    method: 'DELETE',
    path: new RegExp(`^${APPLICATION}\\.xml$`),
    access: 'write',
    handle: deleteApplication,
  },
  {
    method: 'PUT',
    path: new RegExp(`^${APPLICATION}/accept\\.xml$`),
    access: 'write',
    handle: acceptApplication,
  },
  { method: 'GET', path: new RegExp(`^${APPLICATION}/keys\\.xml$`), access: 'read', handle: listKeys },
  { method: 'POST', path: new RegExp(`^${APPLICATION}/keys\\.xml$`), access: 'write', handle: createKey },
  {
    method: 'DELETE',
    path: new RegExp(`^${APPLICATION}/keys/([^/]+?)\\.xml$`),
    access: 'write',
    handle: deleteKey,
  },
];

/** The answer of the route matching the request, or undefined when none does. */
export function accountManagementRoute(
  context: AdminContext,
  method: string,
  path: string,
): Answer | undefined {
  for (const route of ROUTES) {
    if (route.method !== method) continue;
    const match = route.path.exec(path);
    if (match === null) continue;
    authorize(context.caller, route.access);
    return route.handle(context, match);
  }
  return undefined;
}
