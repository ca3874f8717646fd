/**
 * The demo SOAP backend of `npm start`: answers a SOAP 1.1 or 1.2 call with an envelope of the same
 * version that names the operation it received and the action it was called with. It never echoes the
 * SOAP header, which carries the consumer's credential.
 */
import { createServer } from 'node:http';
import { MIMEType } from 'node:util';
import { XMLBuilder } from 'fast-xml-parser';
import { readSoapMessage, SOAP_VERSIONS, type SoapAnswer, type SoapMessage } from '../core/soap/envelope';
import { contentTypeOf, faultAnswer } from '../core/soap/faults';
import { SOAP_ACTION_HEADER } from '../core/soap/forward';
import { SOAP_LARGEST_BOUNDS } from '../core/soap/settings';
import { BodyTooLargeError, closeServer, listenOnLoopback, readBody } from './http-server';

/** Namespace of the echo's own fault subcodes. */
export const SOAP_ECHO_NAMESPACE = 'urn:apigw-access-management:soap-echo';

const MAX_BODY_BYTES = 1024 * 1024;

export interface SoapEchoRequest {
  readonly contentType?: string;
  /** The SOAPAction header (SOAP 1.1). */
  readonly soapAction?: string;
  readonly body: string;
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_' });

/** SOAP 1.2 carries the action as a parameter of the content type; SOAP 1.1 in the SOAPAction header. */
function actionOf(message: SoapMessage, soapAction: string | undefined): string {
  if (message.version === '1.1') return soapAction ?? '';
  return new MIMEType(message.contentType).params.get('action') ?? '';
}

export function soapEcho(request: SoapEchoRequest): SoapAnswer {
  const reading = readSoapMessage(
    { contentType: request.contentType, body: request.body, isBase64Encoded: false },
    // Whatever bounds the proxy in front is given, the echo reads what it forwards.
    { ...SOAP_LARGEST_BOUNDS, soapMaxBodyBytes: MAX_BODY_BYTES },
  );
  if (!reading.ok) return faultAnswer(reading.version, reading, SOAP_ECHO_NAMESPACE);
  const { message } = reading;
  const [operation, ...others] = message.bodyElements;
  if (operation === undefined || others.length > 0) {
    return faultAnswer(
      message.version,
      { cause: 'unreadable_envelope', detail: 'the Body must hold exactly one operation element' },
      SOAP_ECHO_NAMESPACE,
    );
  }
  const prefix = operation.namespace === '' ? '' : 'op:';
  const response = {
    ...(prefix !== '' && { '@_xmlns:op': operation.namespace }),
    [`${prefix}operation`]: operation.localName,
    [`${prefix}action`]: actionOf(message, request.soapAction),
    [`${prefix}soapVersion`]: message.version,
  };
  const envelope = {
    'soap:Envelope': {
      '@_xmlns:soap': SOAP_VERSIONS[message.version].namespace,
      'soap:Body': { [`${prefix}${operation.localName}Response`]: response },
    },
  };
  return {
    statusCode: 200,
    contentType: contentTypeOf(message.version),
    body: `<?xml version="1.0" encoding="UTF-8"?>${builder.build(envelope)}`,
    isBase64Encoded: false,
  };
}

export interface SoapEchoServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Serves `soapEcho` on 127.0.0.1 (port 0: a free port); POST only, any path. */
export async function startSoapEcho(port = 0): Promise<SoapEchoServer> {
  const server = createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    readBody(request, MAX_BODY_BYTES).then(
      (body) => {
        const soapAction = request.headers[SOAP_ACTION_HEADER];
        const answer = soapEcho({
          body: body.toString('utf8'),
          ...(request.headers['content-type'] !== undefined && {
            contentType: request.headers['content-type'],
          }),
          ...(typeof soapAction === 'string' && { soapAction }),
        });
        response.writeHead(
          answer.statusCode,
          answer.contentType ? { 'content-type': answer.contentType } : {},
        );
        response.end(answer.body);
      },
      (error: unknown) => {
        response.writeHead(error instanceof BodyTooLargeError ? 413 : 400).end();
      },
    );
  });
  const bound = await listenOnLoopback(server, port);
  return {
    url: `http://127.0.0.1:${bound}/`,
    port: bound,
    stop: () => closeServer(server),
  };
}
