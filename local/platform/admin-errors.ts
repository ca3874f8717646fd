/**
 * The Account Management API's failures, in the three shapes porta answers them:
 * - a model's validation errors, 422 `<errors><error>...</error></errors>` (Rails' responder on a record
 *   with errors; in JSON `{"errors": {field: [...]}}`);
 * - `render_error`, `<error>message</error>` (in JSON `{"error": message}`): "Access denied" without a
 *   valid provider key or token (`Filters::ProviderRequired`), "Your access token does not have the
 *   correct permissions" for a wrong scope or a read-only token (`ApiAuthentication::ByAccessToken`);
 * - `head status`, no body (in JSON `{"status": "Not found"}`): a record not found, and an ability the
 *   user lacks (`ErrorHandling#handle_error`).
 */
import { escapeXmlText } from './xml';

export type FailureBody =
  | {
      readonly kind: 'errors';
      readonly fields: Readonly<Record<string, readonly string[]>>;
      readonly messages: readonly string[];
    }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'head'; readonly title: string };

export type ApiFormat = 'xml' | 'json';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
export const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8' };

export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';

  constructor(
    readonly status: number,
    readonly body: FailureBody,
  ) {
    super(
      body.kind === 'head' ? body.title : body.kind === 'error' ? body.message : body.messages.join('; '),
    );
  }

  static notFound(): AdminApiError {
    return new AdminApiError(404, { kind: 'head', title: 'Not found' });
  }

  /** An ability the caller's user lacks (CanCan::AccessDenied). */
  static forbidden(): AdminApiError {
    return new AdminApiError(403, { kind: 'head', title: 'Forbidden' });
  }

  static accessDenied(): AdminApiError {
    return new AdminApiError(403, { kind: 'error', message: 'Access denied' });
  }

  static tokenPermissions(): AdminApiError {
    return new AdminApiError(403, {
      kind: 'error',
      message: 'Your access token does not have the correct permissions',
    });
  }

  /** 422 with one message per failed field, each written as Rails' full message ("Email has ..."). */
  static invalid(fields: Record<string, readonly string[]>): AdminApiError {
    const messages = Object.entries(fields).flatMap(([field, list]) =>
      list.map((message) => (field === 'base' ? message : `${humanize(field)} ${message}`)),
    );
    return new AdminApiError(422, { kind: 'errors', fields, messages });
  }

  answer(format: ApiFormat): { status: number; headers: Record<string, string>; body: string } {
    const { body } = this;
    if (format === 'json') {
      const json =
        body.kind === 'errors'
          ? { errors: body.fields }
          : body.kind === 'error'
            ? { error: body.message }
            : { status: body.title };
      return { status: this.status, headers: JSON_HEADERS, body: JSON.stringify(json) };
    }
    const xml =
      body.kind === 'errors'
        ? `${DECLARATION}<errors>${body.messages.map((m) => `<error>${escapeXmlText(m)}</error>`).join('')}</errors>`
        : body.kind === 'error'
          ? `${DECLARATION}<error>${escapeXmlText(body.message)}</error>`
          : '';
    return { status: this.status, headers: {}, body: xml };
  }
}

/** Rails' `humanize` of an attribute name: `org_name` -> `Org name`, `plan_id` -> `Plan`. */
function humanize(field: string): string {
  const words = field.replace(/_id$/, '').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
