/**
 * WebHooks Update (porta's `Admin::Api::WebHooksController`, `PUT /admin/api/webhooks.json`), for the
 * one switch the local platform models: `provider_actions`, "Actions in the admin portal also trigger
 * webhooks". Off, a change made through this API sends no webhook (porta's `WebHook::Event#push_user?`
 * answers `webhook.provider_actions` for a provider user). The URLs and the per-event switches come
 * from the stack file; giving them here is refused with a 422 that says so.
 */
import { type AdminContext, railsBoolean } from './admin-context';
import { AdminApiError, JSON_HEADERS } from './admin-errors';
import { isParamHash, type ParamHash } from './params';
import type { Answer } from './transactor';

const CREDENTIAL_PARAMS = new Set(['access_token', 'provider_key']);

function fieldsOf(values: ParamHash): ParamHash {
  const nested = values.web_hook;
  if (isParamHash(nested)) return nested;
  return Object.fromEntries(Object.entries(values).filter(([name]) => !CREDENTIAL_PARAMS.has(name)));
}

export function updateWebhook(context: AdminContext): Answer {
  const { model } = context;
  const fields = fieldsOf(context.values);
  const unmodelled = Object.keys(fields).filter((name) => name !== 'provider_actions');
  if (unmodelled.length > 0) {
    throw AdminApiError.invalid(
      Object.fromEntries(
        unmodelled.map((name) => [
          name,
          ['is not modelled by the local platform (set webhooks in the stack file)'],
        ]),
      ),
    );
  }
  const value = fields.provider_actions;
  if (typeof value === 'string' && value.trim() !== '')
    model.webhookProviderActions = railsBoolean(value.trim());
  const webhook = {
    // Without its query: a receiver's token is a credential.
    url:
      model.webhooks[0] === undefined
        ? ''
        : new URL(model.webhooks[0]).origin + new URL(model.webhooks[0]).pathname,
    active: model.webhooks.length > 0,
    provider_actions: model.webhookProviderActions,
  };
  return { status: 200, headers: JSON_HEADERS, body: JSON.stringify({ webhook }) };
}
