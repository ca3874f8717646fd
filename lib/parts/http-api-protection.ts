/**
 * Protection of an API Gateway HTTP API (aws-apigatewayv2): one Lambda REQUEST authorizer per API, on every
 * route, failing closed as the REST protection does. docs/http-api.md ("On AWS") says what a consumer sees.
 */
import { AspectPriority, Aspects } from 'aws-cdk-lib';
import {
  CfnAuthorizer,
  type CfnRoute,
  HttpApi,
  HttpRoute,
  type IHttpApi,
  WebSocketApi,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { Construct } from 'constructs';
import { type UnprotectedMethods, unprotectedMethods } from '../../contract/gateway-responses';
import type { AuthorizerFunction } from './authorizer-function';
import { ProtectionLedger } from './protect-methods';
import { ProtectEveryRoute } from './protect-routes';
import { SECURITY_SCHEME_NAME } from './protection';
import {
  allowAuthorizerInvoke,
  canonicalOptions,
  ProtectionRegistry,
  requireAnEndpoint,
  validateEntriesUsed,
} from './protection-common';
import { SendRateLimitFields } from './rate-limit-mapping';

export interface HttpProtectOptions {
  /**
   * Routes left open, each an HTTP method alone (`OPTIONS`: every route of that method) or with a route
   * path (`GET /health`); `ANY` alone also leaves the `$default` route open. Every other route of the API
   * gets the authorizer, or synthesis fails naming it.
   * @default ['OPTIONS']
   */
  readonly unprotectedMethods?: readonly string[];
  /**
   * Send `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-11) on the 2xx answers of
   * every backend of the API, mapped by API Gateway from the authorizer's context. Turn off when the
   * backends send them themselves.
   * @default true
   */
  readonly rateLimitFields?: boolean;
  /**
   * Routes of an imported HTTP API (HttpApi.fromHttpApiAttributes) that this app does not define, each
   * `GET /orders`: you attach the authorizer to them yourself, with the protection's `authorizerId`.
   * Naming them says an authorizer that guards no route of this app is meant; without them, protecting
   * such an API fails synthesis.
   * @default none: an imported API must have a route in this app
   */
  readonly methodsAttachedElsewhere?: readonly string[];
}

/** The settings of the authorizer, each set explicitly: HttpLambdaAuthorizer's defaults are wrong for us. */
export const HTTP_AUTHORIZER_SETTINGS = {
  /** The simple response (`isAuthorized` and `context`) exists in payload 2.0 only. */
  authorizerPayloadFormatVersion: '2.0',
  enableSimpleResponses: true,
  /** The authorizer caches in Redis itself; a gateway cache would skip its usage counting. */
  authorizerResultTtlInSeconds: 0,
} as const;

export interface HttpApiProtectionProps {
  readonly api: IHttpApi;
  readonly authorizer: AuthorizerFunction;
  readonly options: HttpProtectOptions;
}

const protections = new ProtectionRegistry<HttpApiProtection>();

/**
 * The protection of one HTTP API, created in the API's own stack (as ApiProtection is): the authorizer,
 * its permission to invoke the function, and an Aspect over the API's Stage that puts every route of the
 * API behind it wherever the route was created.
 *
 * The authorizer is the L1 CfnAuthorizer: HttpLambdaAuthorizer exists only once a route binds it through
 * its `authorizer` prop (this Aspect sets CfnRoutes, created anywhere), and HttpAuthorizer requires an
 * identity source, where we need none: with one, API Gateway answers 401 without calling the authorizer
 * when it is missing, and with several all must be present, while a credential travels in one of several
 * places (header, query, Bearer).
 */
export class HttpApiProtection extends Construct {
  /** The protection of the HTTP API `api` stands for (the same apiId), if there is one. */
  public static of(api: IHttpApi): HttpApiProtection | undefined {
    return protections.of(api, api.apiId);
  }

  public readonly api: IHttpApi;
  public readonly apiId: string;
  public readonly authorizerId: string;
  public readonly ledger: ProtectionLedger;
  public readonly open: UnprotectedMethods;
  public readonly exempt = new Map<CfnRoute, string>();
  /** The options it was created with, canonical: a second protect() must repeat them. */
  public readonly options: string;

  constructor(props: HttpApiProtectionProps) {
    super(props.api as unknown as Construct, 'AccessProtection');
    this.api = props.api;
    this.apiId = props.api.apiId;
    this.options = canonicalOptions(props.options);
    this.open = unprotectedMethods(props.options.unprotectedMethods);
    this.ledger = new ProtectionLedger([], this.open);
    const stage = protections.register(props.api, this.apiId, this);
    allowAuthorizerInvoke(this, props.authorizer, this.apiId);
    this.authorizerId = new CfnAuthorizer(this, 'Authorizer', {
      apiId: this.apiId,
      name: SECURITY_SCHEME_NAME,
      authorizerType: 'REQUEST',
      authorizerUri: props.authorizer.invocationUri(this),
      ...HTTP_AUTHORIZER_SETTINGS,
    }).ref;
    Aspects.of(stage).add(new ProtectEveryRoute(this), { priority: AspectPriority.MUTATING });
    if (props.options.rateLimitFields ?? true) {
      Aspects.of(stage).add(new SendRateLimitFields(this), { priority: AspectPriority.MUTATING });
    }
    validateEntriesUsed(this, this.ledger, 'route', props.api);
    if (!(props.api instanceof HttpApi)) {
      requireAnEndpoint(this, this.ledger, 'route', props.api, props.options.methodsAttachedElsewhere ?? []);
    }
  }

  /** Leaves a route a part serves with its own authentication open, and says why in the template. */
  public exemptRoute(route: HttpRoute | CfnRoute, why: string): void {
    const resource = (route instanceof HttpRoute ? route.node.defaultChild : route) as CfnRoute;
    this.exempt.set(resource, why);
    resource.addMetadata('ApiAccessAuthorizerExempt', why);
  }
}

/** An HTTP API: an HttpApi, or one imported with HttpApi.fromHttpApiAttributes. */
export function isHttpApi(api: object): api is IHttpApi {
  return 'httpApiId' in api;
}

/** A WebSocket API is refused: its authorizer runs on `$connect` only. */
export function refuseWebSocketApi(api: object): void {
  if (!(api instanceof WebSocketApi)) return;
  throw new Error(
    `${api.node.path} is a WebSocket API: API Gateway calls a WebSocket API's authorizer on $connect only, so an authorizer there would meter connections, not messages, and ApiAccessAuthorizer meters and limits calls. Protect a REST or HTTP API.`,
  );
}
