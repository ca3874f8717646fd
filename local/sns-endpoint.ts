/**
 * A local SNS endpoint speaking the Query protocol that @aws-sdk/client-sns v3 sends (form-encoded POST,
 * XML answers), so the authorizer publishes through the real SDK client. Publish and PublishBatch are
 * served; each message is handed to the topic's subscriber (raw message delivery: the subscriber gets the
 * published Message unchanged).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BodyTooLargeError, closeServer, listenOnLoopback, readBody } from './http-server';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_ACCOUNT_ID = '123456789012';
/** Credentials for the SDK client pointed at the local endpoint; nothing checks them. */
export const LOCAL_AWS_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

const XML_NAMESPACE = 'http://sns.amazonaws.com/doc/2010-03-31/';
/** SNS caps a message, and the sum of a batch's messages, at 256 KiB. */
const MAX_MESSAGE_BYTES = 262_144;
const MAX_BATCH_ENTRIES = 10;
/** Form encoding can triple the size of a batch of maximal messages. */
const MAX_REQUEST_BYTES = 1_048_576;
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

export interface SnsMessageAttribute {
  readonly dataType: string;
  readonly stringValue?: string;
  readonly binaryValue?: string;
}

export interface PublishedMessage {
  readonly messageId: string;
  readonly topicArn: string;
  readonly message: string;
  readonly subject?: string;
  /** 'json': `message` is a JSON object of per-protocol messages with a `default` one. */
  readonly messageStructure?: 'json';
  readonly messageAttributes: Readonly<Record<string, SnsMessageAttribute>>;
  readonly publishedAt: number;
}

/** The message a subscriber of `protocol` gets (SNS's per-protocol message structure). */
export function messageFor(published: PublishedMessage, protocol: string): string {
  if (published.messageStructure !== 'json') return published.message;
  const structure = JSON.parse(published.message) as Record<string, string>;
  return structure[protocol] ?? (structure.default as string);
}

export type TopicSubscriber = (message: PublishedMessage) => void;

/** An error answer the endpoint gives instead of accepting the next publish requests. */
export interface InjectedFailure {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/** SNS's request throttling answer; the SDK's standard retry strategy retries it. */
export const THROTTLING: InjectedFailure = { code: 'Throttling', status: 400, message: 'Rate exceeded' };

export interface SnsEndpointStats {
  /** Publish and PublishBatch requests received, including refused ones. */
  readonly requests: number;
  /** Messages accepted and handed to a subscriber. */
  readonly published: number;
  /** Requests answered with an injected failure. */
  readonly injectedFailures: number;
}

export interface SnsEndpoint {
  readonly url: string;
  readonly port: number;
  /** Creates the topic with `subscriber` as its one subscription (replacing an earlier one); returns its ARN. */
  addTopic(name: string, subscriber: TopicSubscriber): string;
  /** The next `count` Publish/PublishBatch requests are answered with `failure` and deliver nothing. */
  failNextPublishes(count: number, failure?: InjectedFailure): void;
  /** Drops the injected failures not served yet: every publish from here on succeeds. */
  clearFailures(): void;
  stats(): SnsEndpointStats;
  stop(): Promise<void>;
}

export function topicArn(name: string): string {
  return `arn:aws:sns:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:${name}`;
}

class SnsError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly type: 'Sender' | 'Receiver' = status >= 500 ? 'Receiver' : 'Sender',
  ) {
    super(message);
  }
}

function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function responseXml(action: string, result: string, requestId: string): string {
  return (
    `<${action}Response xmlns="${XML_NAMESPACE}"><${action}Result>${result}</${action}Result>` +
    `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`
  );
}

function errorXml(error: SnsError, requestId: string): string {
  return (
    `<ErrorResponse xmlns="${XML_NAMESPACE}"><Error><Type>${error.type}</Type>` +
    `<Code>${escapeXml(error.code)}</Code><Message>${escapeXml(error.message)}</Message></Error>` +
    `<RequestId>${requestId}</RequestId></ErrorResponse>`
  );
}

function invalidParameter(message: string): SnsError {
  return new SnsError('InvalidParameter', 400, `Invalid parameter: ${message}`);
}

interface MessageFields {
  readonly message: string;
  readonly subject?: string;
  readonly messageStructure?: 'json';
  readonly messageAttributes: Record<string, SnsMessageAttribute>;
}

/** Reads `<prefix>Message`, `<prefix>Subject` and `<prefix>MessageAttributes.entry.N.*` from the form. */
function messageFields(form: URLSearchParams, prefix: string): MessageFields {
  const message = form.get(`${prefix}Message`);
  if (message === null) throw invalidParameter('Message');
  if (message === '') throw invalidParameter('Empty message');
  if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES) throw invalidParameter('Message too long');
  const messageAttributes: Record<string, SnsMessageAttribute> = {};
  for (let n = 1; form.has(`${prefix}MessageAttributes.entry.${n}.Name`); n++) {
    const at = `${prefix}MessageAttributes.entry.${n}`;
    const name = form.get(`${at}.Name`) ?? '';
    const dataType = form.get(`${at}.Value.DataType`);
    if (dataType === null) {
      throw new SnsError(
        'ParameterValueInvalid',
        400,
        `The message attribute '${name}' must contain a DataType`,
      );
    }
    const stringValue = form.get(`${at}.Value.StringValue`);
    const binaryValue = form.get(`${at}.Value.BinaryValue`);
    messageAttributes[name] = {
      dataType,
      ...(stringValue !== null && { stringValue }),
      ...(binaryValue !== null && { binaryValue }),
    };
  }
  const subject = form.get(`${prefix}Subject`);
  const structure = form.get(`${prefix}MessageStructure`);
  if (structure !== null) checkJsonStructure(structure, message);
  return {
    message,
    messageAttributes,
    ...(subject !== null && { subject }),
    ...(structure !== null && { messageStructure: 'json' as const }),
  };
}

/** As SNS: the only structure is json, whose message must be a JSON object with a string `default`. */
function checkJsonStructure(structure: string, message: string): void {
  if (structure !== 'json') throw invalidParameter('MessageStructure Reason: must be json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    throw invalidParameter('Message Structure - JSON message body failed to parse');
  }
  const entries = typeof parsed === 'object' && parsed !== null ? Object.entries(parsed) : [];
  if (typeof (parsed as Record<string, unknown>)?.default !== 'string') {
    throw invalidParameter('Message Structure - No default entry in JSON message body');
  }
  if (entries.some(([, value]) => typeof value !== 'string')) {
    throw invalidParameter('Message Structure - every protocol message must be a string');
  }
}

export async function startSnsEndpoint(options: { port?: number } = {}): Promise<SnsEndpoint> {
  const topics = new Map<string, TopicSubscriber>();
  const pendingFailures: InjectedFailure[] = [];
  let requests = 0;
  let published = 0;
  let injectedFailures = 0;

  function subscriberOf(arn: string | null): [string, TopicSubscriber] {
    if (arn === null || arn === '')
      throw invalidParameter('TopicArn or TargetArn Reason: no value for required parameter');
    const subscriber = topics.get(arn);
    if (subscriber === undefined) throw new SnsError('NotFound', 404, 'Topic does not exist');
    return [arn, subscriber];
  }

  function deliver(arn: string, subscriber: TopicSubscriber, fields: MessageFields): string {
    const messageId = randomUUID();
    published++;
    subscriber({ messageId, topicArn: arn, publishedAt: Date.now(), ...fields });
    return messageId;
  }

  function publish(form: URLSearchParams): string {
    if (form.has('TargetArn') || form.has('PhoneNumber')) {
      throw invalidParameter('only TopicArn is supported by the local endpoint');
    }
    const [arn, subscriber] = subscriberOf(form.get('TopicArn'));
    const messageId = deliver(arn, subscriber, messageFields(form, ''));
    return `<MessageId>${messageId}</MessageId>`;
  }

  function publishBatch(form: URLSearchParams): string {
    const [arn, subscriber] = subscriberOf(form.get('TopicArn'));
    const entries: { id: string; fields: MessageFields | SnsError }[] = [];
    for (let n = 1; form.has(`PublishBatchRequestEntries.member.${n}.Id`); n++) {
      const prefix = `PublishBatchRequestEntries.member.${n}.`;
      const id = form.get(`${prefix}Id`) ?? '';
      if (!BATCH_ENTRY_ID.test(id)) {
        throw new SnsError('InvalidBatchEntryId', 400, `The batch entry id ${id} is not valid`);
      }
      let fields: MessageFields | SnsError;
      try {
        fields = messageFields(form, prefix);
      } catch (error) {
        if (!(error instanceof SnsError)) throw error;
        fields = error;
      }
      entries.push({ id, fields });
    }
    if (entries.length === 0) throw new SnsError('EmptyBatchRequest', 400, 'The batch request is empty');
    if (entries.length > MAX_BATCH_ENTRIES) {
      throw new SnsError(
        'TooManyEntriesInBatchRequest',
        400,
        `The batch request contains more entries than permissible (${MAX_BATCH_ENTRIES})`,
      );
    }
    if (new Set(entries.map((entry) => entry.id)).size !== entries.length) {
      throw new SnsError('BatchEntryIdsNotDistinct', 400, 'Two or more batch entries have the same Id');
    }
    const totalBytes = entries.reduce(
      (sum, entry) => sum + (entry.fields instanceof SnsError ? 0 : Buffer.byteLength(entry.fields.message)),
      0,
    );
    if (totalBytes > MAX_MESSAGE_BYTES) {
      throw new SnsError(
        'BatchRequestTooLong',
        400,
        'The length of all the batch messages put together is more than the limit',
      );
    }
    let successful = '';
    let failed = '';
    for (const { id, fields } of entries) {
      if (fields instanceof SnsError) {
        failed +=
          `<member><Id>${escapeXml(id)}</Id><Code>${escapeXml(fields.code)}</Code>` +
          `<Message>${escapeXml(fields.message)}</Message><SenderFault>true</SenderFault></member>`;
      } else {
        const messageId = deliver(arn, subscriber, fields);
        successful += `<member><Id>${escapeXml(id)}</Id><MessageId>${messageId}</MessageId></member>`;
      }
    }
    return `<Successful>${successful}</Successful><Failed>${failed}</Failed>`;
  }

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const send = (status: number, xml: string) => {
      response.writeHead(status, {
        'content-type': 'text/xml',
        'x-amzn-requestid': requestId,
        'content-length': Buffer.byteLength(xml),
      });
      response.end(xml);
    };
    try {
      if (request.method !== 'POST')
        throw new SnsError('InvalidAction', 400, 'Only POST requests are supported');
      const form = new URLSearchParams((await readBody(request, MAX_REQUEST_BYTES)).toString('utf8'));
      const action = form.get('Action') ?? '';
      const operation = action === 'Publish' ? publish : action === 'PublishBatch' ? publishBatch : undefined;
      if (operation === undefined) {
        throw new SnsError('InvalidAction', 400, `The action ${action} is not valid for this endpoint.`);
      }
      requests++;
      const failure = pendingFailures.shift();
      if (failure !== undefined) {
        injectedFailures++;
        throw new SnsError(failure.code, failure.status, failure.message);
      }
      send(200, responseXml(action, operation(form), requestId));
    } catch (error) {
      const snsError =
        error instanceof SnsError
          ? error
          : error instanceof BodyTooLargeError
            ? new SnsError('RequestEntityTooLarge', 413, error.message)
            : new SnsError('InternalError', 500, 'Internal error');
      send(snsError.status, errorXml(snsError, requestId));
    }
  }

  const server = createServer((request, response) => {
    void answer(request, response);
  });
  const port = await listenOnLoopback(server, options.port ?? 0);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    addTopic(name, subscriber) {
      const arn = topicArn(name);
      topics.set(arn, subscriber);
      return arn;
    },
    failNextPublishes(count, failure = THROTTLING) {
      for (let i = 0; i < count; i++) pendingFailures.push(failure);
    },
    clearFailures() {
      pendingFailures.length = 0;
    },
    stats: () => ({ requests, published, injectedFailures }),
    stop: () => closeServer(server),
  };
}
