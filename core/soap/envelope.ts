/**
 * A SOAP request as the proxy reads it: the content type says the SOAP version (1.1 `text/xml`,
 * 1.2 `application/soap+xml`), the body is bounded and checked for markup declarations before any
 * parsing, and the envelope must be a SOAP Envelope of that version with an optional Header and one
 * Body. Everything refused names its cause and the version a Fault should answer in.
 */
import { MIMEType } from 'node:util';
import { readXml, type XmlBound, type XmlElement } from '../xml/xml-tree';

export {
  SOAP_VERSIONS,
  type SoapVersion,
  type SoapVersionSpec,
} from './namespaces';

import { SOAP_VERSIONS, type SoapVersion } from './namespaces';
import type { SoapSettings } from './settings';

const SOAP_VERSION_NAMES = Object.keys(SOAP_VERSIONS) as SoapVersion[];

/** The version faults use when the request does not say one. */
export const DEFAULT_SOAP_VERSION: SoapVersion = '1.1';

export interface SoapRequest {
  readonly contentType: string | undefined;
  /** As API Gateway hands it over: text, or base64 when the media type is configured as binary. */
  readonly body: string | null;
  readonly isBase64Encoded: boolean;
}

/** What the proxy answers: a Fault, or the backend's answer as it came. */
export interface SoapAnswer {
  readonly statusCode: number;
  readonly contentType?: string;
  readonly body: string;
  readonly isBase64Encoded: boolean;
}

export interface SoapMessage {
  readonly version: SoapVersion;
  /** The content type as sent; a SOAP 1.2 action travels in it. */
  readonly contentType: string;
  /** The body's bytes exactly as received. */
  readonly bytes: Buffer;
  readonly headerBlocks: readonly XmlElement[];
  readonly bodyElements: readonly XmlElement[];
}

export type EnvelopeCause =
  | 'unsupported_media_type'
  | 'body_too_large'
  | 'unreadable_envelope'
  | 'envelope_too_complex'
  | 'version_mismatch';

/** The settings that bound reading an envelope. */
export type SoapReadSettings = Pick<
  SoapSettings,
  'soapMaxBodyBytes' | 'soapMaxDepth' | 'soapMaxAttributes' | 'soapMaxNamespaces'
>;

/** The setting that sets each structural bound, named in the Fault. */
const BOUND_SETTINGS: Readonly<Record<XmlBound, keyof SoapReadSettings>> = {
  maxDepth: 'soapMaxDepth',
  maxAttributes: 'soapMaxAttributes',
  maxNamespaces: 'soapMaxNamespaces',
};

export interface EnvelopeRefusal {
  readonly ok: false;
  /** The version the Fault answers in. */
  readonly version: SoapVersion;
  readonly cause: EnvelopeCause;
  readonly detail: string;
}

export type MessageReading = { readonly ok: true; readonly message: SoapMessage } | EnvelopeRefusal;

/**
 * Any `<!` other than a comment or a CDATA section opens a markup declaration: DOCTYPE, ENTITY,
 * ELEMENT, ATTLIST, NOTATION. SOAP 1.1 (section 3) and SOAP 1.2 (part 1 section 5) forbid a DTD in a
 * message; refusing the text before parsing means no entity is ever declared, let alone expanded.
 * The check reads raw text, so the same characters inside a comment or CDATA section are refused too.
 */
const MARKUP_DECLARATION = /<!(?!--|\[CDATA\[)/;

const UTF8 = /^utf-?8$/i;
const BYTE_ORDER_MARK = '\ufeff';
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function versionOfMediaType(essence: string): SoapVersion | undefined {
  return SOAP_VERSION_NAMES.find((version) => SOAP_VERSIONS[version].mediaType === essence);
}

function versionOfNamespace(namespace: string): SoapVersion | undefined {
  return SOAP_VERSION_NAMES.find((version) => SOAP_VERSIONS[version].namespace === namespace);
}

function refusal(version: SoapVersion, cause: EnvelopeCause, detail: string): EnvelopeRefusal {
  return { ok: false, version, cause, detail };
}

const MEDIA_TYPE_HINT = 'send SOAP 1.1 envelopes as text/xml and SOAP 1.2 envelopes as application/soap+xml';

/** The SOAP version a content type announces, or why it announces none. */
export function versionOfContentType(
  contentType: string | undefined,
): { readonly ok: true; readonly version: SoapVersion } | EnvelopeRefusal {
  const refuse = (version: SoapVersion, detail: string) => refusal(version, 'unsupported_media_type', detail);
  if (contentType === undefined || contentType.trim() === '') {
    return refuse(DEFAULT_SOAP_VERSION, `no Content-Type: ${MEDIA_TYPE_HINT}`);
  }
  let mime: MIMEType;
  try {
    mime = new MIMEType(contentType);
  } catch {
    return refuse(DEFAULT_SOAP_VERSION, `Content-Type is not a media type: ${MEDIA_TYPE_HINT}`);
  }
  const version = versionOfMediaType(mime.essence);
  if (version === undefined)
    return refuse(DEFAULT_SOAP_VERSION, `${mime.essence} is not a SOAP media type: ${MEDIA_TYPE_HINT}`);
  const charset = mime.params.get('charset');
  if (charset !== null && !UTF8.test(charset)) {
    return refuse(version, `charset ${charset} is not accepted: send the envelope in UTF-8`);
  }
  return { ok: true, version };
}

/** The body's bytes, refused as too large before anything is decoded or copied when it plainly is. */
function bodyBytes(request: SoapRequest, maxBodyBytes: number): Buffer | undefined {
  const body = request.body ?? '';
  if (request.isBase64Encoded) {
    if (Math.floor((body.length * 3) / 4) > maxBodyBytes + 2) return undefined;
    const bytes = Buffer.from(body, 'base64');
    return bytes.length > maxBodyBytes ? undefined : bytes;
  }
  // A UTF-8 string never has more UTF-16 code units than bytes.
  if (body.length > maxBodyBytes || Buffer.byteLength(body, 'utf8') > maxBodyBytes) return undefined;
  return Buffer.from(body, 'utf8');
}

/** The bytes as text when they are valid UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The Envelope's Header and Body, in that order, and nothing else but what the version allows. */
function envelopeParts(
  envelope: XmlElement,
  version: SoapVersion,
): { readonly header?: XmlElement; readonly body: XmlElement } | string {
  const spec = SOAP_VERSIONS[version];
  const isSoap = (element: XmlElement | undefined, localName: string) =>
    element?.namespace === spec.namespace && element.localName === localName;
  if (envelope.text !== '') return 'the Envelope holds text outside its Header and Body';
  const [first, second, ...rest] = envelope.children;
  const header = isSoap(first, 'Header') ? first : undefined;
  const body = header ? second : first;
  if (body === undefined || !isSoap(body, 'Body'))
    return 'the Envelope must hold a Body, after an optional Header';
  const after = header ? rest : [second, ...rest].filter((element) => element !== undefined);
  const allowedAfter = (element: XmlElement) =>
    spec.elementsAfterBody && element.namespace !== '' && element.namespace !== spec.namespace;
  if (!after.every(allowedAfter))
    return `the Envelope holds an element that SOAP ${version} does not allow after the Body`;
  return { ...(header && { header }), body };
}

/**
 * Reads a SOAP request: content type, size, markup declarations, then the envelope, in time linear in
 * its size and within the structural bounds of `settings` (docs/soap.md, "Security limits and parse cost").
 */
export function readSoapMessage(request: SoapRequest, settings: SoapReadSettings): MessageReading {
  const announced = versionOfContentType(request.contentType);
  if (!announced.ok) return announced;
  const { version } = announced;
  const maxBodyBytes = settings.soapMaxBodyBytes;
  const bytes = bodyBytes(request, maxBodyBytes);
  if (bytes === undefined)
    return refusal(version, 'body_too_large', `the body is larger than ${maxBodyBytes} bytes`);
  const text = request.isBase64Encoded ? utf8Text(bytes) : (request.body ?? '');
  if (text === undefined) return refusal(version, 'unreadable_envelope', 'the body is not UTF-8');
  const document = text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  if (MARKUP_DECLARATION.test(document)) {
    return refusal(version, 'unreadable_envelope', 'document type and entity declarations are not accepted');
  }
  const reading = readXml(document, {
    maxDepth: settings.soapMaxDepth,
    maxAttributes: settings.soapMaxAttributes,
    maxNamespaces: settings.soapMaxNamespaces,
  });
  if (!reading.ok) {
    return reading.bound === undefined
      ? refusal(version, 'unreadable_envelope', `the body is not well-formed XML: ${reading.detail}`)
      : refusal(version, 'envelope_too_complex', `${reading.detail}, over ${BOUND_SETTINGS[reading.bound]}`);
  }
  const { root } = reading;
  const envelopeVersion = versionOfNamespace(root.namespace);
  if (root.localName !== 'Envelope') {
    return refusal(
      version,
      'unreadable_envelope',
      `the root element ${root.localName} is not a SOAP Envelope`,
    );
  }
  if (envelopeVersion === undefined) {
    return refusal(
      version,
      'version_mismatch',
      `the Envelope's namespace "${root.namespace}" is neither SOAP 1.1 nor SOAP 1.2`,
    );
  }
  if (envelopeVersion !== version) {
    return refusal(
      envelopeVersion,
      'unsupported_media_type',
      `a SOAP ${envelopeVersion} envelope is sent as ${SOAP_VERSIONS[envelopeVersion].mediaType}`,
    );
  }
  const parts = envelopeParts(root, version);
  if (typeof parts === 'string') return refusal(version, 'unreadable_envelope', parts);
  return {
    ok: true,
    message: {
      version,
      contentType: request.contentType as string,
      bytes,
      headerBlocks: parts.header?.children ?? [],
      bodyElements: parts.body.children,
    },
  };
}
