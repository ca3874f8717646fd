import { Annotations, CfnResource, type IAspect, Lazy } from 'aws-cdk-lib';
import { AuthorizationType, CfnMethod, Deployment, Method } from 'aws-cdk-lib/aws-apigateway';
import type { IConstruct } from 'constructs';
import type { UnprotectedMethods } from '../../contract/gateway-responses';
import { acknowledgeNagRules } from '../nag-acknowledgements';

/** A method or route named by its HTTP method and path. */
const ROUTE_NAME = /^[A-Z]+ \//;

/** What protection decided for each method of one API: the content of its deployments' logical ids. */
export class ProtectionLedger {
  private readonly protectedMethods = new Set<string>();
  private readonly openMethods = new Set<string>();
  private readonly usedEntries = new Set<string>();
  private readonly apiKeyNotRequired = new Set<string>();
  private readonly fingerprinted = new WeakSet<Deployment>();

  constructor(
    private readonly identitySources: readonly string[],
    private readonly open: UnprotectedMethods,
  ) {}

  public protect(name: string): void {
    this.protectedMethods.add(name);
  }

  /** Records a method left open, and by which unprotectedMethods entry (none: a part's own route). */
  public leaveOpen(name: string, entry?: string): void {
    this.openMethods.add(name);
    if (entry !== undefined) this.usedEntries.add(entry);
  }

  /**
   * The protected methods, each `METHOD /resource` (bare CfnMethods, named by construct path, and an HTTP
   * API's `$default` route, which has no path, left out).
   */
  public protectedRoutes(): string[] {
    return [...this.protectedMethods].filter((name) => ROUTE_NAME.test(name)).sort();
  }

  /** Records a protected method whose apiKeyRequired was turned off: its stage needs a new deployment. */
  public stopRequiringApiKey(name: string): void {
    this.apiKeyNotRequired.add(name);
  }

  /** Whether some method (a bare CfnMethod too) got the authorizer. */
  public protectsAnyMethod(): boolean {
    return this.protectedMethods.size > 0;
  }

  /** Entries of unprotectedMethods that named no method: probably a misspelt path. */
  public unusedEntries(): string[] {
    return this.open.entries.filter((entry) => !this.usedEntries.has(entry));
  }

  /**
   * Makes a deployment's logical id depend on what is protected, so a stage serves a new deployment when
   * protection changes. Resolved at synthesis, after every method was seen.
   */
  public fingerprint(deployment: Deployment): void {
    if (this.fingerprinted.has(deployment)) return;
    this.fingerprinted.add(deployment);
    deployment.addToLogicalId({
      apiAccessProtection: Lazy.uncachedAny({
        produce: () => ({
          identitySources: this.identitySources,
          protected: [...this.protectedMethods].sort(),
          open: [...this.openMethods].sort(),
          ...(this.apiKeyNotRequired.size > 0 && { apiKeyNotRequired: [...this.apiKeyNotRequired].sort() }),
        }),
      }),
    });
  }
}

/** What the Aspect needs from the protection of one API. */
export interface MethodGuard {
  readonly restApiId: string;
  readonly authorizerId: string;
  readonly ledger: ProtectionLedger;
  readonly open: UnprotectedMethods;
  /** Methods a part serves with their own authentication, and why. */
  readonly exempt: ReadonlyMap<CfnMethod, string>;
  /** What to do with a protected method that still requires one of API Gateway's own API keys. */
  readonly apiKeyRequired: ApiKeyRequiredChoice;
}

/**
 * A protected method with `apiKeyRequired: true`: API Gateway still demands one of its usage-plan keys
 * besides our credential. `warn` says so at synthesis, naming it; `turnOff` clears the flag (the cut-over
 * of docs/migrating-from-usage-plans.md).
 */
export type ApiKeyRequiredChoice = 'warn' | 'turnOff';

/** `GET /orders` for a Method, or the method and the construct path for a bare CfnMethod. */
function nameOf(method: CfnMethod): { name: string; path?: string } {
  const owner = method.node.scope;
  if (owner instanceof Method)
    return { name: `${owner.httpMethod} ${owner.resource.path}`, path: owner.resource.path };
  return { name: `${method.httpMethod} (${method.node.path})` };
}

/**
 * Fails closed over a whole Stage (nested stacks and methods created anywhere included): every method of
 * the protected API gets the authorizer, or is left open by name, or synthesis fails naming it. Works on
 * the CloudFormation resources, so a bare CfnMethod is covered like a Method.
 */
export class ProtectEveryMethod implements IAspect {
  constructor(private readonly guard: MethodGuard) {}

  public visit(node: IConstruct): void {
    if (node instanceof Deployment) {
      if (node.api.restApiId === this.guard.restApiId) this.guard.ledger.fingerprint(node);
      return;
    }
    if (!CfnResource.isCfnResource(node) || node.cfnResourceType !== CfnMethod.CFN_RESOURCE_TYPE_NAME) return;
    const method = node as CfnMethod;
    if (method.restApiId === this.guard.restApiId) this.protectMethod(method);
  }

  private protectMethod(method: CfnMethod): void {
    const { ledger } = this.guard;
    const { name, path } = nameOf(method);
    const entry = this.guard.open.entryFor(method.httpMethod, path);
    if (entry !== undefined || this.guard.exempt.has(method)) {
      ledger.leaveOpen(name, entry);
      return;
    }
    const type = method.authorizationType;
    if (type === AuthorizationType.CUSTOM && method.authorizerId === this.guard.authorizerId) {
      ledger.protect(name);
      this.settleApiKeyRequired(method, name);
      return;
    }
    if (type !== undefined && type !== AuthorizationType.NONE) {
      Annotations.of(method).addError(
        `${name} already uses ${type} authorization${method.authorizerId ? ' with another authorizer' : ''}; ` +
          'ApiAccessAuthorizer cannot protect it as well: remove that authorization, or list the method in unprotectedMethods',
      );
      return;
    }
    method.authorizationType = AuthorizationType.CUSTOM;
    method.authorizerId = this.guard.authorizerId;
    ledger.protect(name);
    this.settleApiKeyRequired(method, name);
    acknowledgeNagRules(method, [
      {
        id: 'AwsSolutions-COG4',
        reason:
          'The method is protected by the ApiAccessAuthorizer Lambda REQUEST authorizer; consumers hold API keys, not Cognito users.',
      },
    ]);
  }

  private settleApiKeyRequired(method: CfnMethod, name: string): void {
    if (method.apiKeyRequired !== true) return;
    if (this.guard.apiKeyRequired === 'turnOff') {
      method.apiKeyRequired = false;
      this.guard.ledger.stopRequiringApiKey(name);
      return;
    }
    Annotations.of(method).addWarningV2(
      'apigw-access-management:apiKeyRequired',
      `${name} keeps apiKeyRequired: API Gateway still demands one of its own usage-plan API keys before the authorizer runs, so a consumer with only a platform key is refused 403. ` +
        "Turn it off with protect(api, { apiKeyRequired: 'turnOff' }) once the keys are on the platform (docs/migrating-from-usage-plans.md).",
    );
  }
}
