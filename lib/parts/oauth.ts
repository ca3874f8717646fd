/**
 * OAuth 2.0 access tokens in AWS (credentialMode `oauth`). Two issuers:
 * - built in (no `oidcJwksUrl`): a KMS asymmetric key (ECC_NIST_P256, SIGN_VERIFY) whose private half never
 *   leaves KMS, the token function that signs with it, and its open routes on each protected RestApi:
 *   `POST /oauth/token`, `GET /.well-known/jwks.json`, `GET /.well-known/openid-configuration`. The
 *   authorizer fetches the JWKS from the API once per container, like any relying party.
 * - external (`oidcIssuer` + `oidcJwksUrl`, e.g. Cognito or Keycloak): nothing to deploy but a way out to the
 *   provider's JWKS; the functions' security group already reaches HTTPS through the VPC's NAT.
 *
 * The built-in issuer's URL is, unless `oidcIssuer` names one (a custom domain), the protected API's own
 * execute-api URL. The functions read it from their environment, so it is written as the API's id, the
 * region and the stage's name as written: the stage's Ref would make a cycle (the stage depends on the
 * methods, the methods on the authorizer, the authorizer on its function).
 */
import { Duration, Lazy, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { AuthorizationType, LambdaIntegration, type Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { Peer, Port } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import {
  type AccessConfig,
  type AccessConfigInput,
  ConfigError,
  ENV,
  externalIssuer,
  parseConfig,
} from '../../core/settings/config';
import { DISCOVERY_PATH, JWKS_PATH, TOKEN_PATH } from '../../lambdas/token/routes';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { functionErrorsOf } from './alarms';
import { basePathOf } from './docs';
import type { HttpApiProtection } from './http-api-protection';
import { addOpenHttpRoutes } from './http-api-routes';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';
import type { ApiProtection } from './protection';

/** The built-in issuer's routes: the token endpoint, its public keys and the discovery document. */
const TOKEN_ROUTES = [
  ['POST', TOKEN_PATH],
  ['GET', JWKS_PATH],
  ['GET', DISCOVERY_PATH],
] as const;

/** A syntactically valid issuer that parseConfig checks in place of the protected API's URL, unknown yet. */
const ISSUER_STAND_IN = 'https://built-in-issuer.invalid';

/** Why the token routes have no authorizer (cdk-nag's APIG4 and COG4, and the template's metadata). */
const OPEN_BY_DESIGN =
  'OAuth 2.0 token endpoint and its public keys (RFC 6749 4.4, OpenID Connect Discovery): a client has no token yet; the token function checks its id and secret with the platform itself, and the JWKS and discovery document are public.';

/**
 * The built-in issuer's URL when the provider names none: the URL of the one API this construct protects,
 * known only at `protect()`. Until then (and at synthesis) it is a token the functions' environment holds.
 */
export class ProtectedApiIssuer {
  private url?: string;
  private apiPath?: string;
  public readonly token: string = Lazy.string({
    produce: () => {
      if (this.url === undefined) {
        throw new ConfigError(
          'oidcIssuer',
          'is the protected API’s URL by default in oauth mode: protect a RestApi or an HttpApi with this ApiAccessAuthorizer, or set oidcIssuer',
        );
      }
      return this.url;
    },
  });

  /** The execute-api URL of `api`'s stage, as a RestApi's `url` is, but with the stage's name as written. */
  public use(api: RestApi): void {
    this.claim(api);
    const stagePath = basePathOf(api);
    if (stagePath === '') {
      throw new ConfigError(
        'oidcIssuer',
        `${api.node.path} has no deployment stage to take the issuer URL from: set oidcIssuer`,
      );
    }
    const stack = Stack.of(api);
    this.url = `https://${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}${stagePath}`;
  }

  /** The endpoint of an HttpApi's `$default` stage, the one stage that serves the API at its root. */
  public useHttpApi(api: HttpApi): void {
    this.claim(api);
    if (api.defaultStage === undefined) {
      throw new ConfigError(
        'oidcIssuer',
        `${api.node.path} has no $default stage, which serves the API at its endpoint's root: set oidcIssuer to the URL its token routes are served under`,
      );
    }
    this.url = api.apiEndpoint;
  }

  private claim(api: RestApi | HttpApi): void {
    if (this.apiPath !== undefined && this.apiPath !== api.node.path) {
      throw new ConfigError(
        'oidcIssuer',
        `the built-in issuer is the protected API’s own URL (${this.apiPath}), so it serves one API: to protect ${api.node.path} too, set oidcIssuer to a URL (a custom domain) whose /.well-known/jwks.json reaches the token function`,
      );
    }
    this.apiPath = api.node.path;
  }
}

/** Whether the construct runs the built-in issuer: oauth mode with no external provider's keys URL. */
export function builtInIssuer(config: Pick<AccessConfig, 'credentialMode' | 'oidcJwksUrl'>): boolean {
  return config.credentialMode === 'oauth' && !externalIssuer(config);
}

/**
 * The validated settings; in oauth mode with neither an issuer nor a keys URL, the issuer is the protected
 * API's URL (`issuer.token`), checked as a stand-in URL first.
 */
export function parseConfigWithIssuer(input: AccessConfigInput, issuer: ProtectedApiIssuer): AccessConfig {
  if (input.credentialMode !== 'oauth' || input.oidcIssuer !== undefined || input.oidcJwksUrl !== undefined) {
    return parseConfig(input);
  }
  return { ...parseConfig({ ...input, oidcIssuer: ISSUER_STAND_IN }), oidcIssuer: issuer.token };
}

/** In AWS the issuer and its keys are reached over the internet: https only, as for the platform. */
export function validateIssuerUrls(config: Pick<AccessConfig, 'oidcIssuer' | 'oidcJwksUrl'>): void {
  for (const setting of ['oidcIssuer', 'oidcJwksUrl'] as const) {
    const url = config[setting];
    if (url !== undefined && !Token.isUnresolved(url) && !url.startsWith('https://')) {
      throw new ConfigError(
        setting,
        `must be an https:// URL in AWS: token keys fetched in clear could be replaced on the way (got ${url})`,
      );
    }
  }
}

export interface OAuthPartProps extends FunctionPartProps {
  /** The issuer's URL holder when the issuer is the protected API itself. */
  readonly issuer: ProtectedApiIssuer;
}

/** The issuer of oauth mode: the built-in one's key, function and routes, or the way out to an external one. */
export class OAuthPart implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  /** The built-in issuer's token function. */
  public readonly tokenFunction?: LambdaFunction;
  /** The built-in issuer's signing key. */
  public readonly signingKey?: Key;

  constructor(
    scope: Construct,
    private readonly props: OAuthPartProps,
  ) {
    const { config } = props.bindings;
    if (!builtInIssuer(config)) {
      this.allowJwksPort(config.oidcJwksUrl);
      this.alarms = [];
      return;
    }
    this.signingKey = new Key(scope, 'TokenSigningKey', {
      description: 'Signs the OAuth 2.0 access tokens of the API access authorizer (ES256)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // Tokens live a day at most and nothing is encrypted with the key: deleting the stack schedules its
      // deletion, which can still be cancelled during the waiting period.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.tokenFunction = partFunction(scope, 'TokenFunction', props, {
      bundle: 'token',
      invokedByApiGateway: true,
      description: 'OAuth 2.0 token endpoint: checks the client with the platform, signs tokens with KMS',
      memorySize: 256,
      timeout: Duration.seconds(10),
      environment: { [ENV.tokenSigningKeyId]: this.signingKey.keyArn },
    });
    this.signingKey.grant(this.tokenFunction, 'kms:Sign', 'kms:GetPublicKey');
    this.onlyTokenFunctionSigns(this.signingKey, this.tokenFunction);
    this.alarms = [
      {
        id: 'TokenFunctionErrors',
        description:
          'The token function failed (a crash or a timeout): clients got no token. Its answers to the platform or KMS being unavailable are 503 temporarily_unavailable in its logs.',
        metric: functionErrorsOf('Token function errors', this.tokenFunction),
        threshold: 1,
      },
    ];
  }

  /** Adds the token endpoint, the JWKS and the discovery document to a RestApi, open to anyone. */
  public onProtect(protection: ApiProtection): void {
    const fn = this.tokenFunction;
    if (fn === undefined) return;
    const { api } = protection;
    if (!(api instanceof RestApi)) {
      throw new Error(
        `${api.node.path}: the token routes are added to a RestApi only; set oidcIssuer to the URL that serves them and add POST ${TOKEN_PATH}, GET ${JWKS_PATH} and GET ${DISCOVERY_PATH} with a LambdaIntegration of the token function yourself`,
      );
    }
    if (this.props.bindings.config.oidcIssuer === this.props.issuer.token) this.props.issuer.use(api);
    const integration = new LambdaIntegration(fn);
    for (const [httpMethod, path] of TOKEN_ROUTES) {
      const method = api.root
        .resourceForPath(path)
        .addMethod(httpMethod, integration, { authorizationType: AuthorizationType.NONE });
      this.leaveOpen(protection, method);
    }
  }

  /** The same routes on an HttpApi, open to anyone; the issuer is its `$default` stage's endpoint. */
  public onProtectHttpApi(protection: HttpApiProtection): void {
    const fn = this.tokenFunction;
    if (fn === undefined) return;
    const { api } = protection;
    if (!(api instanceof HttpApi)) {
      throw new Error(
        `${api.node.path}: the token routes are added to an HttpApi only; set oidcIssuer to the URL that serves them and add POST ${TOKEN_PATH}, GET ${JWKS_PATH} and GET ${DISCOVERY_PATH} with an HttpLambdaIntegration (payload 1.0) of the token function yourself`,
      );
    }
    if (this.props.bindings.config.oidcIssuer === this.props.issuer.token) this.props.issuer.useHttpApi(api);
    addOpenHttpRoutes(protection, api, {
      id: 'TokenIntegration',
      function: fn,
      routes: TOKEN_ROUTES.map(([method, path]) => [HttpMethod[method], path] as const),
      why: OPEN_BY_DESIGN,
    });
  }

  private leaveOpen(protection: ApiProtection, method: Method): void {
    protection.exemptMethod(method, OPEN_BY_DESIGN);
    acknowledgeNagRules(method, [
      { id: 'AwsSolutions-APIG4', reason: OPEN_BY_DESIGN },
      { id: 'AwsSolutions-COG4', reason: OPEN_BY_DESIGN },
    ]);
  }

  /**
   * The key policy refuses kms:Sign to every principal but the token function's role, whatever IAM policy
   * another principal of the account holds: whoever can sign can mint tokens for any application.
   */
  private onlyTokenFunctionSigns(key: Key, fn: LambdaFunction): void {
    if (fn.role === undefined) throw new Error(`${fn.node.path} has no role to allow kms:Sign`);
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyTheTokenFunctionSigns',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['kms:Sign'],
        resources: ['*'],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': fn.role.roleArn } },
      }),
    );
  }

  /** An external JWKS on a port other than HTTPS's needs its own way out of the functions' security group. */
  private allowJwksPort(jwksUrl: string | undefined): void {
    if (jwksUrl === undefined) return;
    const url = new URL(jwksUrl);
    if (url.port === '' || url.port === '443') return;
    this.props.network.functionSecurityGroup.addEgressRule(
      Peer.anyIpv4(),
      Port.tcp(Number(url.port)),
      "The external OpenID provider's JWKS",
    );
  }
}
