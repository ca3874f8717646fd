/**
 * Application Key List, Create and Delete (porta's `Admin::Api::BuyerApplicationKeysController`), for
 * app_id and OIDC services. A create without `key` generates one (`ApplicationKey.generate`, 32 hex
 * digits); an application holds at most 5 keys, an OIDC one a single client secret
 * (`Cinstance#keys_limit`), and one more answers 422 "Limit reached". A key takes effect at
 * `authrep.xml` at once, and a deleted one stops at once; each change sends its webhook. Deleting the
 * last key is allowed: the admin API's `remove!` skips the "at least one key" check that porta's
 * developer portal makes (`ApplicationKey::AssociationExtension#can_remove?`).
 */
import { type AdminContext, text } from './admin-context';
import { AdminApiError } from './admin-errors';
import { applicationAnswerXml, applicationEventXml, keysAnswerXml } from './admin-xml';
import { findAccountApplication, generatedKey } from './applications-api';
import type { Service } from './model';
import type { Answer } from './transactor';

/** porta's `ApplicationKey::KEYS_LIMIT`. */
export const KEYS_LIMIT = 5;
/** printable ASCII without spaces, 5 to 255 characters (porta's `ApplicationKey` validations). */
const KEY_FORMAT = /^[\x21-\x7E]+$/;

export function keysLimit(service: Service): number {
  return service.authentication === 'oidc' ? 1 : KEYS_LIMIT;
}

/** What is wrong with a key value, as porta's full message; undefined when it is fine. */
export function appKeyProblem(key: string): string | undefined {
  if (key.length < 5) return 'Value is too short (minimum is 5 characters)';
  if (key.length > 255) return 'Value is too long (maximum is 255 characters)';
  return KEY_FORMAT.test(key) ? undefined : 'Value is invalid';
}

export function listKeys(context: AdminContext, [, accountId, id]: readonly string[]): Answer {
  const { application } = findAccountApplication(context.services, accountId as string, id as string);
  return { status: 200, headers: {}, body: keysAnswerXml([...application.appKeys]) };
}

export function createKey(context: AdminContext, [, accountId, id]: readonly string[]): Answer {
  const { service, application } = findAccountApplication(
    context.services,
    accountId as string,
    id as string,
  );
  if (service.authentication === 'user_key') {
    throw AdminApiError.invalid({ base: ['Application keys do not apply to a user_key service'] });
  }
  const key = text(context.values, 'key') ?? generatedKey();
  const problem = appKeyProblem(key);
  if (problem !== undefined) throw AdminApiError.invalid({ base: [problem] });
  if ([...application.appKeys].some((held) => held.toLowerCase() === key.toLowerCase())) {
    throw AdminApiError.invalid({ base: ['Value has already been taken'] });
  }
  if (application.appKeys.size >= keysLimit(service))
    throw AdminApiError.invalid({ base: ['Limit reached'] });
  application.appKeys.add(key);
  application.touch(context.now);
  context.notify('key_created', applicationEventXml('key_created', service, application));
  return { status: 201, headers: {}, body: applicationAnswerXml(service, application) };
}

/** Deletes one key; porta answers a DELETE with 200 and no body, and an unknown key with 404. */
export function deleteKey(context: AdminContext, [, accountId, id, key]: readonly string[]): Answer {
  const { service, application } = findAccountApplication(
    context.services,
    accountId as string,
    id as string,
  );
  let value: string;
  try {
    value = decodeURIComponent(key as string);
  } catch {
    throw AdminApiError.notFound();
  }
  if (!application.appKeys.delete(value)) throw AdminApiError.notFound();
  application.touch(context.now);
  context.notify('key_deleted', applicationEventXml('key_deleted', service, application));
  return { status: 200, headers: {}, body: '' };
}
