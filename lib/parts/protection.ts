import { AspectPriority, Aspects, Token } from 'aws-cdk-lib';
import {
  AuthorizationType,
  CfnAuthorizer,
  type CfnMethod,
  type CfnRestApi,
  type CorsOptions,
  type IAuthorizer,
  type IRestApi,
  Method,
  ResponseType,
  RestApi,
  RestApiBase,
  SpecRestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import {
  type AccessGatewayResponse,
  accessGatewayResponses,
  type UnprotectedMethods,
  unprotectedMethods,
} from '../../contract/gateway-responses';
import { credentialPromptOf } from '../../core/credentials';
import { type AccessConfig, ConfigError } from '../../core/settings/config';
import type { AuthorizerFunction } from './authorizer-function';
import { withAccessSecurity, withGatewayResponses } from './openapi-security';
import { type ApiKeyRequiredChoice, ProtectEveryMethod, ProtectionLedger } from './protect-methods';
import {
  allowAuthorizerInvoke,
  canonicalOptions,
  ProtectionRegistry,
  requireAnEndpoint,
  validateEntriesUsed,
} from './protection-common';

export interface ProtectOptions {
  /**
   * Add JSON gateway responses: 401 with a fixed message, 403 with the authorizer's reason, 500 when the
   * authorizer fails. Turn off when the API already defines responses of these types.
   * @default true
   */
  readonly gatewayResponses?: boolean;
  /**
   * Methods left open, each an HTTP method alone (`OPTIONS`: every CORS preflight) or with a resource path
   * (`GET /health`). Every other method of the API gets the authorizer, or synthesis fails naming it.
   * @default ['OPTIONS']
   */
  readonly unprotectedMethods?: readonly string[];
  /**
   * CORS headers for the gateway responses, so a browser can read a refusal.
   * @default the API root's defaultCorsPreflightOptions, if any
   */
  readonly cors?: CorsOptions;
  /**
   * Methods of an imported API (RestApi.fromRestApiId) that this app does not define, each `GET /orders`:
   * you attach the authorizer to them yourself, with the protection's `authorizerId` (for example in the
   * stack or OpenAPI definition that owns them). Naming them says an authorizer that guards no method of
   * this app is meant; without them, protecting such an API fails synthesis.
   * @default none: an imported API must have a method in this app
   */
  readonly methodsAttachedElsewhere?: readonly string[];
  /**
   * A protected method that keeps `apiKeyRequired: true` still needs one of API Gateway's own usage-plan
   * keys. `warn` warns at synthesis naming each such method; `turnOff` turns the flag off on the methods
   * this protection guards (docs/migrating-from-usage-plans.md gives the cut-over order).
   * @default 'warn'
   */
  readonly apiKeyRequired?: ApiKeyRequiredChoice;
}

/** Name of the authorizer (and of its OpenAPI security scheme) in every protected API. */
export const SECURITY_SCHEME_NAME = 'ApiAccessAuthorizer';

/** Which kind of REST API, by what protection must do for it. */
type ApiKind = 'RestApi' | 'SpecRestApi' | 'imported';

function kindOf(api: IRestApi): ApiKind {
  if (api instanceof SpecRestApi) return 'SpecRestApi';
  if (api instanceof RestApi) return 'RestApi';
  if (api instanceof RestApiBase) return 'imported';
  const type = (api.constructor as unknown as Record<symbol, { fqn?: string } | undefined>)[
    Symbol.for('jsii.rtti')
  ]?.fqn;
  const what = Construct.isConstruct(api)
    ? `${api.node.path} (${type ?? api.constructor.name})`
    : String(api);
  throw new Error(
    `ApiAccessAuthorizer protects API Gateway REST APIs (RestApi, SpecRestApi, or one imported with RestApi.fromRestApiId or fromRestApiAttributes) and HTTP APIs (HttpApi, or one imported with HttpApi.fromHttpApiAttributes); ${what} is neither.`,
  );
}

/** The CORS headers a refusal carries, from the API's CORS settings. */
export function corsResponseHeaders(cors: CorsOptions | undefined): Record<string, string> | undefined {
  if (!cors) return undefined;
  // A gateway response cannot echo one of several origins: the first one is sent, as in the preflight.
  const origin = cors.allowOrigins.includes('*') ? '*' : (cors.allowOrigins[0] ?? '*');
  return {
    'Access-Control-Allow-Origin': `'${origin}'`,
    ...(origin !== '*' && { Vary: "'Origin'" }),
    ...(cors.allowCredentials && { 'Access-Control-Allow-Credentials': "'true'" }),
    ...(cors.exposeHeaders?.length && {
      'Access-Control-Expose-Headers': `'${cors.exposeHeaders.join(',')}'`,
    }),
  };
}

/** The gateway responses a protected API gets, and the CORS headers they carry. */
interface GatewayResponses {
  readonly responses: readonly AccessGatewayResponse[];
  readonly headers?: Record<string, string>;
}

/**
 * A response's own headers as mapping expressions, with the CORS ones: static values quoted, and the
 * authorizer's context values as `context.authorizer.<key>` (a context variable is a mapping source).
 */
function headerMappings(response: AccessGatewayResponse, cors: GatewayResponses['headers']) {
  const own = Object.entries(response.headers ?? {}).map(([name, value]) => [name, `'${value}'`]);
  const mapped = Object.entries(response.contextHeaders ?? {}).map(([name, key]) => [
    name,
    `context.authorizer.${key}`,
  ]);
  const all = { ...cors, ...Object.fromEntries(own), ...Object.fromEntries(mapped) };
  return Object.keys(all).length === 0 ? undefined : all;
}

/** The responses as OpenAPI's `x-amazon-apigateway-gateway-responses` entries. */
function openApiGatewayResponses({ responses, headers }: GatewayResponses): Record<string, unknown> {
  return Object.fromEntries(
    responses.map((response) => {
      const mappings = headerMappings(response, headers);
      return [
        response.type,
        {
          statusCode: response.statusCode,
          responseTemplates: { 'application/json': response.template },
          ...(mappings && {
            responseParameters: Object.fromEntries(
              Object.entries(mappings).map(([name, value]) => [`gatewayresponse.header.${name}`, value]),
            ),
          }),
        },
      ];
    }),
  );
}

export interface ApiProtectionProps {
  readonly api: IRestApi;
  readonly authorizer: AuthorizerFunction;
  readonly config: AccessConfig;
  readonly options: ProtectOptions;
}

const protections = new ProtectionRegistry<ApiProtection>();

/**
 * The protection of one REST API, created in the API's own stack so that an API in another stack needs
 * only the authorizer function's ARN from ours (no cycle): the API Gateway authorizer, its permission to
 * invoke the function, the gateway responses, and an Aspect over the API's Stage that protects every
 * method of the API wherever it was created.
 */
export class ApiProtection extends Construct implements IAuthorizer {
  /** The protection of the API `api` stands for (the same restApiId), if there is one. */
  public static of(api: IRestApi): ApiProtection | undefined {
    return protections.of(api, api.restApiId);
  }

  public readonly authorizationType = AuthorizationType.CUSTOM;
  public readonly api: IRestApi;
  public readonly restApiId: string;
  public readonly ledger: ProtectionLedger;
  public readonly open: UnprotectedMethods;
  public readonly exempt = new Map<CfnMethod, string>();
  public readonly apiKeyRequired: ApiKeyRequiredChoice;
  /** The options it was created with, canonical: a second protect() must repeat them. */
  public readonly options: string;
  private readonly authorizerFunction: AuthorizerFunction;
  private cfnAuthorizer?: CfnAuthorizer;

  /**
   * Protects `props.api`, which must be a REST API: the protection is created under the API construct, in
   * the API's stack.
   */
  public static create(props: ApiProtectionProps): ApiProtection {
    const kind = kindOf(props.api);
    return new ApiProtection(props.api as unknown as Construct, kind, props);
  }

  private constructor(scope: Construct, kind: ApiKind, props: ApiProtectionProps) {
    super(scope, 'AccessProtection');
    this.api = props.api;
    this.restApiId = props.api.restApiId;
    this.authorizerFunction = props.authorizer;
    this.options = canonicalOptions(props.options);
    this.apiKeyRequired = props.options.apiKeyRequired ?? 'warn';
    if (!(['warn', 'turnOff'] as const).includes(this.apiKeyRequired)) {
      throw new ConfigError(
        'apiKeyRequired',
        `must be 'warn' or 'turnOff' (got ${JSON.stringify(this.apiKeyRequired)})`,
      );
    }
    this.open = unprotectedMethods(props.options.unprotectedMethods);
    this.ledger = new ProtectionLedger(props.authorizer.identitySources, this.open);
    const stage = protections.register(props.api, this.restApiId, this);
    allowAuthorizerInvoke(this, props.authorizer, this.restApiId);
    const responses: GatewayResponses = {
      responses:
        (props.options.gatewayResponses ?? true)
          ? accessGatewayResponses(credentialPromptOf(props.config))
          : [],
      headers: corsResponseHeaders(
        props.options.cors ?? (kind === 'RestApi' ? props.api.root.defaultCorsPreflightOptions : undefined),
      ),
    };
    if (kind === 'SpecRestApi') {
      // Everything goes into the definition: API Gateway replaces what it does not define on each import.
      this.secureDefinition(props.api as SpecRestApi, responses);
    } else {
      this.ensureAuthorizer();
      this.addGatewayResponses(props.api as RestApiBase, responses);
    }
    Aspects.of(stage).add(new ProtectEveryMethod(this), { priority: AspectPriority.MUTATING });
    validateEntriesUsed(this, this.ledger, 'method', props.api);
    if (kind === 'imported') {
      requireAnEndpoint(this, this.ledger, 'method', props.api, props.options.methodsAttachedElsewhere ?? []);
    }
  }

  /** The API Gateway authorizer of the methods CDK creates (created on first use for a SpecRestApi). */
  public get authorizerId(): string {
    return this.ensureAuthorizer().ref;
  }

  private ensureAuthorizer(): CfnAuthorizer {
    this.cfnAuthorizer ??= new CfnAuthorizer(this, 'Authorizer', {
      restApiId: this.restApiId,
      name: SECURITY_SCHEME_NAME,
      type: 'REQUEST',
      authorizerUri: this.authorizerFunction.invocationUri(this),
      // None in oauth mode (a token travels in one of two places); API Gateway allows that with no result cache.
      ...(this.authorizerFunction.identitySources.length > 0 && {
        identitySource: this.authorizerFunction.identitySources.join(','),
      }),
      // The authorizer caches in Redis itself; a gateway cache would skip its usage counting.
      authorizerResultTtlInSeconds: 0,
    });
    return this.cfnAuthorizer;
  }

  /** Leaves a method a part serves with its own authentication open, and says why in the template. */
  public exemptMethod(method: Method | CfnMethod, why: string): void {
    const resource = (method instanceof Method ? method.node.defaultChild : method) as CfnMethod;
    this.exempt.set(resource, why);
    resource.addMetadata('ApiAccessAuthorizerExempt', why);
  }

  private secureDefinition(api: SpecRestApi, responses: GatewayResponses): void {
    const resource = api.node.defaultChild as CfnRestApi;
    if (resource.body === undefined || Token.isUnresolved(resource.body)) {
      throw new Error(
        `${api.node.path}: ApiAccessAuthorizer puts its security scheme into the OpenAPI definition, so it needs an inline one (ApiDefinition.fromInline); an asset or S3 definition cannot be changed at synthesis`,
      );
    }
    let secured: ReturnType<typeof withAccessSecurity>;
    try {
      secured = withAccessSecurity(
        resource.body,
        {
          name: SECURITY_SCHEME_NAME,
          identitySources: this.authorizerFunction.identitySources,
          authorizerUri: this.authorizerFunction.invocationUri(this),
        },
        this.open,
      );
    } catch (error) {
      throw new Error(`${api.node.path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    resource.body = withGatewayResponses(secured.definition, openApiGatewayResponses(responses));
    for (const operation of secured.protectedOperations) this.ledger.protect(operation);
    for (const { operation, entry } of secured.openOperations) this.ledger.leaveOpen(operation, entry);
  }

  private addGatewayResponses(api: RestApiBase, { responses, headers }: GatewayResponses): void {
    for (const response of responses) {
      const mappings = headerMappings(response, headers);
      api.addGatewayResponse(`AccessResponse${response.type}`, {
        type: ResponseType.of(response.type),
        statusCode: String(response.statusCode),
        templates: { 'application/json': response.template },
        ...(mappings && { responseHeaders: mappings }),
      });
    }
  }
}
