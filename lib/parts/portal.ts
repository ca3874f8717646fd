import { Aws, CfnOutput, Duration, Fn, Lazy, Stack } from 'aws-cdk-lib';
import { AuthorizationType, LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { DOCS_ENV } from '../../contract/docs';
import { type KeyReveal, parsePortalSettings, type SignupMode } from '../../core/portal/settings';
import { DERIVED_KEYS, PORTAL_ENV, PORTAL_PATH } from '../../lambdas/portal/env';
import { basePathOf, leaveOpen } from './docs';
import type { HttpApiProtection } from './http-api-protection';
import { addOpenHttpRoutes } from './http-api-routes';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';
import type { ApiProtection } from './protection';

/** The portal's e-mails: sent through Amazon SES from a verified identity. */
export interface PortalMailSettings {
  /** The SES identity (a verified domain, or an address) the portal may send as. */
  readonly sesIdentity: string;
  /**
   * The sender address.
   * @default `no-reply@<sesIdentity>` for a domain identity, the identity itself for an address
   */
  readonly from?: string;
}

/** The developer portal (docs/portal.md): sign-up, approval, credentials shown once, docs filled in. */
export interface PortalSettings {
  /**
   * Secrets Manager ARN (complete) of an Account Management API access token with the
   * `account_management` scope and `rw` permission, owned by an admin user; only the portal reads it.
   * The portal's cookie-signing key and its account webhook's token are derived from it.
   */
  readonly adminTokenSecretArn: string;
  readonly mail: PortalMailSettings;
  /**
   * Whether secrets are filled into the docs only in the tab that created them, or always (as porta does).
   * @default 'creating-tab'
   */
  readonly keyReveal?: KeyReveal;
  /**
   * Whether an account may have several applications.
   * @default false: one application per account
   */
  readonly multipleApplications?: boolean;
  /**
   * E-mail domains that may sign up.
   * @default any domain
   */
  readonly allowedEmailDomains?: readonly string[];
  /**
   * `invite`: only addresses the provider invited (`POST /portal/invitations`) may sign up.
   * @default 'open'
   */
  readonly signups?: SignupMode;
  /**
   * Sign-ups in all, an hour (besides 5 per source address, 3 per e-mail a day, 20 per domain an hour).
   * @default 100
   */
  readonly signupsPerHour?: number;
  /**
   * How long an old app key keeps working after a roll (app id and OAuth modes).
   * @default Duration.hours(24)
   */
  readonly rollGrace?: Duration;
}

export interface PortalPartProps extends FunctionPartProps {
  readonly settings: PortalSettings;
}

/** Why the portal's routes have no authorizer (the template's metadata, cdk-nag's APIG4 and COG4). */
const OPEN_BY_DESIGN =
  'Developer portal: developers sign up and sign in here before they hold a key, so its routes cannot be behind the key authorizer; it authenticates its own sessions (signed cookies, CSRF checks).';

/** The sender: the address given, else no-reply at a domain identity, else the address identity. */
function senderOf(mail: PortalMailSettings): string {
  return mail.from ?? (mail.sesIdentity.includes('@') ? mail.sesIdentity : `no-reply@${mail.sesIdentity}`);
}

/**
 * The developer portal: `GET /portal` and `ANY /portal/{proxy+}` on each protected REST or HTTP API, its
 * own origin, served by one function per API in the VPC (Redis keeps its link tokens, sessions and
 * limits as SHA-256s). It writes the platform with the provider's `rw` admin token, sends its e-mails
 * through SES, and creates no resource that costs at rest (no secret of its own).
 */
export class PortalPart implements AccessPart {
  /** None: an alarm costs at rest, and the portal costs nothing then (docs/portal.md says what to watch). */
  public readonly alarms: readonly AlarmSpec[] = [];
  /** The portal function of each protected API, by the API's construct path. */
  public readonly functions = new Map<string, LambdaFunction>();
  private readonly adminToken: ISecret;
  private readonly settingsJson: string;

  constructor(
    private readonly scope: Construct,
    private readonly props: PortalPartProps,
  ) {
    const { settings } = props;
    this.adminToken = Secret.fromSecretCompleteArn(scope, 'PortalAdminToken', settings.adminTokenSecretArn);
    // Checked at synthesis with the same rules the function applies.
    this.settingsJson = JSON.stringify(
      parsePortalSettings(
        {
          ...(settings.keyReveal !== undefined && { keyReveal: settings.keyReveal }),
          ...(settings.multipleApplications !== undefined && {
            multipleApplications: settings.multipleApplications,
          }),
          ...(settings.allowedEmailDomains !== undefined && {
            allowedEmailDomains: [...settings.allowedEmailDomains],
          }),
          ...(settings.signups !== undefined && { signups: settings.signups }),
          ...(settings.signupsPerHour !== undefined && { signupsPerHour: settings.signupsPerHour }),
          ...(settings.rollGrace !== undefined && { rollGraceSeconds: settings.rollGrace.toSeconds() }),
          mailFrom: senderOf(settings.mail),
        },
        'portal',
      ),
    );
  }

  public onProtect(protection: ApiProtection): void {
    const { api } = protection;
    if (!(api instanceof RestApi)) return;
    if (api.root.getResource(PORTAL_PATH.slice(1)) !== undefined) {
      throw new Error(
        `${api.node.path} already has a ${PORTAL_PATH} resource: move it, or leave the portal off`,
      );
    }
    const integration = new LambdaIntegration(this.portalFunction(protection, () => basePathOf(api)));
    const portal = api.root.addResource(PORTAL_PATH.slice(1));
    const methods = [
      portal.addMethod('GET', integration, { authorizationType: AuthorizationType.NONE }),
      portal
        .addResource('{proxy+}')
        .addMethod('ANY', integration, { authorizationType: AuthorizationType.NONE }),
    ];
    for (const method of methods) leaveOpen(protection, method, OPEN_BY_DESIGN);
    if (api.latestDeployment !== undefined) this.outputs(protection, api.urlForPath(PORTAL_PATH));
  }

  public onProtectHttpApi(protection: HttpApiProtection): void {
    const { api } = protection;
    if (!(api instanceof HttpApi)) return;
    addOpenHttpRoutes(protection, api, {
      id: 'PortalIntegration',
      function: this.portalFunction(protection, () => ''),
      routes: [
        [HttpMethod.GET, PORTAL_PATH],
        [HttpMethod.ANY, `${PORTAL_PATH}/{proxy+}`],
      ],
      why: OPEN_BY_DESIGN,
    });
    if (api.defaultStage !== undefined) this.outputs(protection, `${api.apiEndpoint}${PORTAL_PATH}`);
  }

  private portalFunction(
    protection: ApiProtection | HttpApiProtection,
    basePath: () => string,
  ): LambdaFunction {
    const id = this.functions.size === 0 ? 'PortalFunction' : `PortalFunction${this.functions.size + 1}`;
    const fn = partFunction(this.scope, id, this.props, {
      bundle: 'portal',
      invokedByApiGateway: true,
      description: 'Developer portal: sign-up, approval, credentials shown once, documentation filled in',
      memorySize: 512,
      timeout: Duration.seconds(15),
      environment: {
        [PORTAL_ENV.settings]: this.settingsJson,
        [PORTAL_ENV.adminTokenSecretArn]: this.adminToken.secretArn,
        [DOCS_ENV.routes]: Lazy.string({
          produce: () => JSON.stringify(protection.ledger.protectedRoutes()),
        }),
        [DOCS_ENV.basePath]: Lazy.string({ produce: basePath }),
      },
    });
    this.adminToken.grantRead(fn);
    const { sesIdentity } = this.props.settings.mail;
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [
          Stack.of(fn).formatArn({ service: 'ses', resource: 'identity', resourceName: sesIdentity }),
        ],
      }),
    );
    this.functions.set(protection.api.node.path, fn);
    return fn;
  }

  /** The portal's URL, and the command that prints the account webhook's URL (its token derived). */
  private outputs(protection: Construct, url: string): void {
    new CfnOutput(protection, 'PortalUrl', { value: url, description: 'The developer portal' });
    new CfnOutput(protection, 'PortalAccountWebhookUrlCommand', {
      value: Fn.join('', [
        'T=$(aws secretsmanager get-secret-value --region ',
        Aws.REGION,
        ' --secret-id ',
        this.adminToken.secretArn,
        ` --query SecretString --output text) && echo "${url}/hooks/account?token=$(printf %s ${DERIVED_KEYS.webhook} | openssl dgst -sha256 -hmac "$T" -binary | base64 | tr '+/' '-_' | tr -d '=')"`,
      ]),
      description:
        "Prints the portal's account webhook URL (its token derived from the admin token) for the platform's webhook setting",
    });
  }
}
