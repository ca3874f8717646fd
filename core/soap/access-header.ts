/**
 * The credential and the method a SOAP call carries as header blocks in the extension namespace
 * (`soapNamespace`), matched by namespace URI and local name whatever the prefix. Each credential mode
 * is one entry of SOAP_CREDENTIAL_SCHEMES; values pass the same checks as header credentials.
 */

import {
  checkedValue,
  type ExampleApplication,
  MALFORMED_PROBLEM,
  MAX_CREDENTIAL_BYTES,
} from '../credentials';
import type { Credential } from '../platform/types';
import type { CredentialMode } from '../settings/config';
import type { XmlElement } from '../xml/xml-tree';
import type { SoapMessage } from './envelope';

export type SoapCredentialMode = CredentialMode | 'oauth';

/** What the envelope carries; an access token is verified by the core, like a Bearer token. */
export type SoapCredential = Credential | { readonly kind: 'access_token'; readonly accessToken: string };

/** A signed token (a JWT) is longer than a key; this bounds it like an HTTP header line would. */
export const MAX_ACCESS_TOKEN_BYTES = 4096;

/** The element that names the operation: its value must be the local name of the Body's operation element. */
export const METHOD_ELEMENT = 'method';

interface CredentialElement {
  readonly name: string;
  readonly required: boolean;
  readonly maxBytes: number;
}

export interface SoapCredentialScheme {
  readonly elements: readonly CredentialElement[];
  /** The credential from the checked values of `elements`, by element name (required ones present). */
  credentialOf(values: ReadonlyMap<string, string>): SoapCredential;
  /** Element names and values of a ready-to-paste envelope for the application, or placeholders. */
  exampleElements(application?: ExampleApplication): [string, string][];
}

function requiredValue(values: ReadonlyMap<string, string>, name: string): string {
  const value = values.get(name);
  if (value === undefined) throw new Error(`${name} was checked as required`);
  return value;
}

const keyElement = (name: string, required = true): CredentialElement => ({
  name,
  required,
  maxBytes: MAX_CREDENTIAL_BYTES,
});

export const SOAP_CREDENTIAL_SCHEMES: Readonly<Record<SoapCredentialMode, SoapCredentialScheme>> = {
  user_key: {
    elements: [keyElement('ApiKey')],
    credentialOf: (values) => ({ kind: 'user_key', userKey: requiredValue(values, 'ApiKey') }),
    exampleElements: (application) => [['ApiKey', application ? (application.userKey ?? '') : '<USER_KEY>']],
  },
  // The app key is optional, as on the platform: an application may have no keys.
  app_id: {
    elements: [keyElement('AppId'), keyElement('AppKey', false)],
    credentialOf: (values) => {
      const appKey = values.get('AppKey');
      return {
        kind: 'app_id',
        appId: requiredValue(values, 'AppId'),
        ...(appKey !== undefined && { appKey }),
      };
    },
    exampleElements: (application) => {
      if (!application)
        return [
          ['AppId', '<APP_ID>'],
          ['AppKey', '<APP_KEY>'],
        ];
      const appKey = application.appKeys[0];
      return [
        ['AppId', application.id],
        ...(appKey !== undefined ? [['AppKey', appKey] as [string, string]] : []),
      ];
    },
  },
  oauth: {
    elements: [{ name: 'AccessToken', required: true, maxBytes: MAX_ACCESS_TOKEN_BYTES }],
    credentialOf: (values) => ({ kind: 'access_token', accessToken: requiredValue(values, 'AccessToken') }),
    exampleElements: () => [['AccessToken', '<ACCESS_TOKEN>']],
  },
};

export type AccessHeaderCause =
  | 'missing_credential'
  | 'invalid_credential'
  | 'method_missing'
  | 'method_invalid';

export interface AccessHeader {
  readonly credential: SoapCredential;
  /** The operation, as the `method` element names it. */
  readonly method: string;
}

export type AccessHeaderReading =
  | { readonly ok: true; readonly header: AccessHeader }
  | { readonly ok: false; readonly cause: AccessHeaderCause; readonly detail: string };

/** The elements of the extension namespace among the header blocks, by local name. */
function extensionBlocks(message: SoapMessage, namespace: string): Map<string, XmlElement[]> {
  const blocks = new Map<string, XmlElement[]>();
  for (const block of message.headerBlocks) {
    if (block.namespace !== namespace) continue;
    const same = blocks.get(block.localName);
    if (same) same.push(block);
    else blocks.set(block.localName, [block]);
  }
  return blocks;
}

type ElementText =
  | { readonly ok: true; readonly value?: string }
  | { readonly ok: false; readonly problem: string };

/** The text of the one element of that name, if any; several, or an element with child elements, is refused. */
function singleText(blocks: ReadonlyMap<string, readonly XmlElement[]>, name: string): ElementText {
  const found = blocks.get(name) ?? [];
  if (found.length > 1) return { ok: false, problem: `the header holds ${found.length} ${name} elements` };
  const [element] = found;
  if (element === undefined) return { ok: true };
  if (element.children.length > 0) return { ok: false, problem: `${name} must hold text only` };
  return { ok: true, value: element.text };
}

function readCredential(
  blocks: ReadonlyMap<string, readonly XmlElement[]>,
  scheme: SoapCredentialScheme,
  namespace: string,
): { readonly ok: true; readonly credential: SoapCredential } | Extract<AccessHeaderReading, { ok: false }> {
  const values = new Map<string, string>();
  for (const element of scheme.elements) {
    const text = singleText(blocks, element.name);
    if (!text.ok) return { ok: false, cause: 'invalid_credential', detail: text.problem };
    if (text.value === undefined) {
      if (!element.required) continue;
      return {
        ok: false,
        cause: 'missing_credential',
        detail: `no ${element.name} element in the SOAP header (namespace ${namespace})`,
      };
    }
    const checked = checkedValue(text.value, element.maxBytes);
    if (!checked.ok) {
      return {
        ok: false,
        cause: 'invalid_credential',
        detail: `${element.name} ${MALFORMED_PROBLEM[checked.reason]}`,
      };
    }
    values.set(element.name, text.value);
  }
  return { ok: true, credential: scheme.credentialOf(values) };
}

/**
 * The method, which must name the one operation element of the Body (WS-I Basic Profile R9981 allows
 * at most one). Without this check a consumer could name a cheap or enabled method in the header and
 * call another operation, counted on the wrong metric.
 */
function readMethod(
  blocks: ReadonlyMap<string, readonly XmlElement[]>,
  message: SoapMessage,
): { readonly ok: true; readonly method: string } | Extract<AccessHeaderReading, { ok: false }> {
  const text = singleText(blocks, METHOD_ELEMENT);
  if (!text.ok) return { ok: false, cause: 'method_invalid', detail: text.problem };
  if (text.value === undefined || text.value === '') {
    return {
      ok: false,
      cause: 'method_missing',
      detail: `no ${METHOD_ELEMENT} element naming the operation`,
    };
  }
  const [operation, ...others] = message.bodyElements;
  if (operation === undefined || others.length > 0) {
    return { ok: false, cause: 'method_invalid', detail: 'the Body must hold exactly one operation element' };
  }
  if (operation.localName !== text.value) {
    return {
      ok: false,
      cause: 'method_invalid',
      detail: `${METHOD_ELEMENT} "${text.value}" does not name the operation in the Body (${operation.localName})`,
    };
  }
  return { ok: true, method: text.value };
}

/** The credential (checked first, as a REST call's credential is) and the method of a SOAP message. */
export function readAccessHeader(
  message: SoapMessage,
  scheme: SoapCredentialScheme,
  namespace: string,
): AccessHeaderReading {
  const blocks = extensionBlocks(message, namespace);
  const credential = readCredential(blocks, scheme, namespace);
  if (!credential.ok) return credential;
  const method = readMethod(blocks, message);
  if (!method.ok) return method;
  return { ok: true, header: { credential: credential.credential, method: method.method } };
}
