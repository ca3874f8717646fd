/**
 * The platform's webhooks, received: 3scale POSTs an `<event>` (as a form field `xml`, or as the body
 * with an XML content type) when an application is created, updated, suspended, deleted, changes plan
 * or user key, or gains or loses a key. The budget of that application is refreshed from the platform
 * at once (one authorize, the answer stored as the reporter's resync stores it), so a suspension, a
 * plan change or a deleted key reaches the cache within a second instead of the next report window.
 * A limit edited in a plan sends no webhook on the platform; that change keeps the report-window bound.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { type CredentialAnswer, isCredentialAnswer, stateOf } from '../budget/snapshot';
import { credentialIdOf, credentialIdPrefix, keyIdOf } from '../credentials';
import { TOKEN_REVOKING_ACTIONS } from '../credentials/token-not-before';
import type { TokensNotBefore } from '../credentials/token-revocation';
import { METRIC } from '../observability/observability';
import type { FlushPorts } from '../reporting/flush-types';
import type { CredentialMode } from '../settings/config';
import { readXml, type XmlBounds } from '../xml/xml-tree';
import type { Credential } from './types';

/**
 * A body that is not a webhook event, unreadable XML included: the sender's fault, which sending again
 * cannot mend. The receiver answers 400 with the message and does not count it as an error of ours.
 */
export class WebhookBodyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WebhookBodyError';
  }
}

/**
 * An event is five levels deep (event, object, application, keys, key) with few attributes; these bounds
 * leave room and keep the object parser's recursion far from the stack's limit.
 */
export const WEBHOOK_XML_BOUNDS: XmlBounds = { maxDepth: 32, maxAttributes: 32, maxNamespaces: 32 };

/** What an application event tells (the `<application>` object, as the Account Management API shows it). */
export interface ApplicationEvent {
  readonly type: 'application';
  readonly action: string;
  readonly serviceId: string;
  /** user_key services. */
  readonly userKey?: string;
  /** app_id services: the application id and its keys after the change. */
  readonly appId?: string;
  readonly keys: readonly string[];
}

/** An event about anything else (an account, a user): nothing the cache keeps. */
export interface OtherEvent {
  readonly type: 'other';
  readonly objectType: string;
  readonly action: string;
}

export type PlatformEvent = ApplicationEvent | OtherEvent;

const parser = new XMLParser({
  ignoreDeclaration: true,
  parseTagValue: false,
  isArray: (name) => name === 'key',
});

type XmlNode = Record<string, unknown>;
const isNode = (value: unknown): value is XmlNode => typeof value === 'object' && value !== null;

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return String(value).trim() || undefined;
  if (isNode(value) && typeof value['#text'] === 'string') return value['#text'].trim() || undefined;
  return undefined;
}

/** The event XML of a webhook body: a form whose `xml` field holds it, or the XML itself. */
export function eventXmlOf(body: string, contentType: string | undefined): string {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const xml = new URLSearchParams(body).get('xml');
    if (xml === null) throw new WebhookBodyError('the form has no xml field');
    return xml;
  }
  return body;
}

/** Reads an `<event>` document; throws WebhookBodyError saying what is wrong with it. */
export function parseEventXml(xml: string): PlatformEvent {
  // Checked first by our linear reader: no DTD or entity declaration, bounded depth, well-formed.
  const reading = readXml(xml, WEBHOOK_XML_BOUNDS);
  if (!reading.ok) throw new WebhookBodyError(`the body is not well-formed XML: ${reading.detail}`);
  let document: XmlNode;
  try {
    document = parser.parse(xml) as XmlNode;
  } catch (error) {
    throw new WebhookBodyError('the body is not well-formed XML', { cause: error });
  }
  const event = document.event;
  if (!isNode(event)) throw new WebhookBodyError('the document is not an <event>');
  const action = textOf(event.action);
  const objectType = textOf(event.type);
  if (action === undefined || objectType === undefined) {
    throw new WebhookBodyError('the event has no <action> or no <type>');
  }
  if (objectType !== 'application') return { type: 'other', objectType, action };
  const application = isNode(event.object) ? event.object.application : undefined;
  if (!isNode(application)) throw new WebhookBodyError('the application event has no <object><application>');
  const serviceId = textOf(application.service_id);
  if (serviceId === undefined) throw new WebhookBodyError('the application has no <service_id>');
  const userKey = textOf(application.user_key);
  const appId = textOf(application.application_id);
  if (userKey === undefined && appId === undefined) {
    throw new WebhookBodyError('the application has neither <user_key> nor <application_id>');
  }
  const keyList = isNode(application.keys) ? application.keys.key : undefined;
  const keys = (Array.isArray(keyList) ? keyList : [])
    .map(textOf)
    .filter((key): key is string => key !== undefined);
  return {
    type: 'application',
    action,
    serviceId,
    ...(userKey !== undefined && { userKey }),
    ...(appId !== undefined && { appId }),
    keys,
  };
}

/** Whether the token presented equals the configured one, compared in constant time (on digests). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined || expected === '') return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The ports of one service's receiver: those of the reporter's stages, and the service's credential mode. */
export interface WebhookPorts
  extends Pick<FlushPorts, 'serviceId' | 'cache' | 'sealer' | 'platform' | 'now' | 'logger' | 'metrics'> {
  readonly credentialMode: CredentialMode;
  /** Where oauth mode refuses the tokens issued before a key deletion or a suspension. */
  readonly tokensNotBefore: Pick<TokensNotBefore, 'refuseBefore'>;
}

export type WebhookOutcome =
  /** Not an application of this service, or nothing the cache keeps. */
  | { readonly kind: 'ignored'; readonly why: string }
  /** The cache holds nothing of the application: its first call will ask the platform anyway. */
  | { readonly kind: 'unknown' }
  /** The budget holds the platform's fresh answer. */
  | { readonly kind: 'refreshed'; readonly credentialId: string; readonly state: string }
  /** The platform did not answer the refresh: the webhook should come again. */
  | { readonly kind: 'unanswered'; readonly credentialId: string };

/** The credential the event names, in the service's mode (with one of the application's keys, if any). */
function credentialOf(ports: WebhookPorts, event: ApplicationEvent): Credential | undefined {
  if (ports.credentialMode === 'user_key') {
    return event.userKey === undefined ? undefined : { kind: 'user_key', userKey: event.userKey };
  }
  if (event.appId === undefined) return undefined;
  const [appKey] = event.keys;
  return { kind: 'app_id', appId: event.appId, ...(appKey !== undefined && { appKey }) };
}

/** What the cache learns from a deleted application: it is gone, as the platform would now say. */
function deletedAnswer(credential: Credential): CredentialAnswer {
  return credential.kind === 'user_key'
    ? { kind: 'invalid_credential', code: 'user_key_invalid', message: 'user key is invalid' }
    : { kind: 'invalid_credential', code: 'application_not_found', message: 'application was deleted' };
}

/**
 * Applies an event to the cache: the application's budget, if the cache has one, gets the platform's
 * fresh answer (a deleted application is refused without asking); an app_id budget forgets the keys the
 * application no longer has. In oauth mode a deleted key, a suspension or a deletion also refuses the
 * application's access tokens issued before now.
 */
export async function applyPlatformEvent(ports: WebhookPorts, event: PlatformEvent): Promise<WebhookOutcome> {
  if (event.type !== 'application') return { kind: 'ignored', why: `a ${event.objectType} event` };
  if (event.serviceId !== ports.serviceId) return { kind: 'ignored', why: 'another service' };
  const credential = credentialOf(ports, event);
  if (credential === undefined)
    return { kind: 'ignored', why: `no credential of ${ports.credentialMode} mode` };
  const credentialId = credentialIdOf(ports.serviceId, credential);
  if (
    ports.credentialMode === 'oauth' &&
    credential.kind === 'app_id' &&
    TOKEN_REVOKING_ACTIONS.has(event.action)
  ) {
    // Before the budget's check: tokens are verified without the cache, whether it holds the budget or not.
    await ports.tokensNotBefore.refuseBefore(credential.appId, ports.now());
  }
  const kept =
    credential.kind === 'app_id'
      ? event.keys.map((appKey) => keyIdOf(ports.serviceId, { ...credential, appKey }))
      : [];
  // The event says the credential and its keys exist: a refusal kept from before they did (a key tried,
  // then created) is forgotten, or it would hold for the negative entry's whole TTL.
  if (event.action !== 'deleted') await ports.cache.forgetRefusals(credentialId, kept);
  if (!(await ports.cache.hasBudget(credentialId))) return { kind: 'unknown' };
  if (credential.kind === 'app_id') {
    await ports.cache.forgetKeysExcept(credentialId, event.action === 'deleted' ? [] : kept);
  }
  let answer: CredentialAnswer;
  if (event.action === 'deleted') {
    answer = deletedAnswer(credential);
  } else {
    ports.metrics.addMetric(METRIC.platformCall, 'Count', 1);
    const outcome = await ports.platform.authorize(credential);
    if (!isCredentialAnswer(outcome)) {
      ports.logger.warn('webhook: the platform did not answer the refresh', {
        credential: credentialIdPrefix(credentialId),
        action: event.action,
        kind: outcome.kind,
        detail: outcome.message,
      });
      return { kind: 'unanswered', credentialId };
    }
    answer = outcome;
  }
  await ports.cache.storeAnswer({
    credentialId,
    keyId: keyIdOf(ports.serviceId, credential),
    sealedCredential: ports.sealer.seal(credentialId, credential),
    answer,
    now: ports.now(),
  });
  const state = stateOf(answer);
  ports.metrics.addMetric(METRIC.webhookApplied, 'Count', 1);
  ports.logger.info('webhook applied', {
    credential: credentialIdPrefix(credentialId),
    action: event.action,
    state: state.kind,
  });
  return { kind: 'refreshed', credentialId, state: state.kind };
}
