/**
 * The SOAP action must agree with the operation the proxy counts. Many SOAP stacks dispatch on the action
 * (SOAP 1.1 `SOAPAction` header, section 6.1.1; SOAP 1.2 `action` parameter of the content type, part 2
 * section 7.1.4) rather than on the Body, so an action naming another operation would buy that operation
 * under the counted one's limits. The proxy cannot derive the backend's action URIs (they are the WSDL's
 * choice), so it refuses an action whose last segment does not name the operation (docs/soap.md,
 * "The SOAP action").
 */
import { MIMEType } from 'node:util';

/** WS-Addressing's default action ends with the operation's input name: the operation name + "Request". */
const DEFAULT_INPUT_SUFFIX = 'Request';

/** The last segment of an action URI: after its last `/`, `:` or `#`. */
function lastSegment(action: string): string {
  return action.slice(
    Math.max(action.lastIndexOf('/'), action.lastIndexOf(':'), action.lastIndexOf('#')) + 1,
  );
}

/** SOAP 1.1 sends the header as a quoted string; `""` and an absent header say nothing. */
function unquoted(value: string): string {
  const trimmed = value.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')
    ? trimmed.slice(1, -1)
    : trimmed;
}

/** The actions a request carries, as the backend would receive them: header and content type parameter. */
export function actionsOf(contentType: string, soapActionHeader: string | undefined): string[] {
  const actions: string[] = [];
  if (soapActionHeader !== undefined) actions.push(unquoted(soapActionHeader));
  const parameter = new MIMEType(contentType).params.get('action');
  if (parameter !== null) actions.push(parameter.trim());
  return actions.filter((action) => action !== '');
}

export type ActionCheck = { readonly ok: true } | { readonly ok: false; readonly detail: string };

/** Whether every action the request carries names `operation`; no action at all agrees with any. */
export function checkAction(
  contentType: string,
  soapActionHeader: string | undefined,
  operation: string,
): ActionCheck {
  for (const action of actionsOf(contentType, soapActionHeader)) {
    const segment = lastSegment(action);
    if (segment !== operation && segment !== `${operation}${DEFAULT_INPUT_SUFFIX}`) {
      return { ok: false, detail: `the SOAP action does not name the operation ${operation}` };
    }
  }
  return { ok: true };
}
