/**
 * The namespaces SOAP and XML reserve, without any parser: the CDK validates the proxy's settings with
 * them at synthesis, where only aws-cdk-lib and constructs are installed.
 */

export const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
export const XMLNS_NAMESPACE = 'http://www.w3.org/2000/xmlns/';

export type SoapVersion = '1.1' | '1.2';

export interface SoapVersionSpec {
  readonly namespace: string;
  /** The media type its HTTP binding sends envelopes as (SOAP 1.1 section 6.1.1, SOAP 1.2 part 2 section 7.1.4). */
  readonly mediaType: string;
  /** SOAP 1.1 allows namespace-qualified elements after the Body; SOAP 1.2 allows nothing there. */
  readonly elementsAfterBody: boolean;
}

export const SOAP_VERSIONS: Readonly<Record<SoapVersion, SoapVersionSpec>> = {
  '1.1': {
    namespace: 'http://schemas.xmlsoap.org/soap/envelope/',
    mediaType: 'text/xml',
    elementsAfterBody: true,
  },
  '1.2': {
    namespace: 'http://www.w3.org/2003/05/soap-envelope',
    mediaType: 'application/soap+xml',
    elementsAfterBody: false,
  },
};
