/**
 * Every gateway format the authorizer answers, keyed by name, and which one an event is. One bundle
 * serves them all: the event says its format (`version` "2.0" or "1.0" on an HTTP API; none on REST).
 */
import type { APIGatewayRequestAuthorizerEvent, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import type { GatewayFormat } from './format';
import { type HttpApiV1AuthorizerEvent, httpV1Format } from './http-v1';
import { httpV2Format } from './http-v2';
import { restFormat } from './rest';

export const GATEWAY_FORMATS = {
  rest: restFormat,
  'http-1.0': httpV1Format,
  'http-2.0': httpV2Format,
} as const;

export type GatewayFormatName = keyof typeof GATEWAY_FORMATS;

export type AuthorizerEvent =
  | APIGatewayRequestAuthorizerEvent
  | HttpApiV1AuthorizerEvent
  | APIGatewayRequestAuthorizerEventV2;

export type AuthorizerAnswer = ReturnType<(typeof GATEWAY_FORMATS)[GatewayFormatName]['answerOf']>;

/** An event no format reads: the authorizer is attached to something it was not built for. */
export class UnsupportedEventError extends Error {
  constructor(what: string) {
    super(`the authorizer does not read this event: ${what}`);
    this.name = 'UnsupportedEventError';
  }
}

/** The name of the event's format; throws UnsupportedEventError for any other event. */
export function formatNameOf(event: AuthorizerEvent): GatewayFormatName {
  const version = 'version' in event ? event.version : undefined;
  if (version === '2.0') return 'http-2.0';
  if (version === '1.0') return 'http-1.0';
  if (version === undefined && event.type === 'REQUEST' && 'methodArn' in event) return 'rest';
  throw new UnsupportedEventError(`type ${String(event.type)}, version ${String(version)}`);
}

/** The event's format, typed loosely: the caller hands it back the same event. */
export function formatOf(event: AuthorizerEvent): GatewayFormat<AuthorizerEvent, AuthorizerAnswer> {
  return GATEWAY_FORMATS[formatNameOf(event)] as unknown as GatewayFormat<AuthorizerEvent, AuthorizerAnswer>;
}
