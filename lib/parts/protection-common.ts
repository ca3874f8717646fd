/** What the protection of a REST API and of an HTTP API share: registry, invoke permission, unused entries. */
import { Stack, Stage } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct, IConstruct } from 'constructs';
import type { AuthorizerFunction } from './authorizer-function';
import type { ProtectionLedger } from './protect-methods';

/** The protections of each Stage, by the id their API resolves to: one protection per API. */
export class ProtectionRegistry<P> {
  private readonly byStage = new WeakMap<IConstruct, Map<string, P>>();

  /** The protection of the API with this id in `api`'s Stage, if there is one. */
  public of(api: IConstruct, apiId: string): P | undefined {
    return this.byStage.get(stageOf(api))?.get(apiId);
  }

  /** Registers `protection` for the API with this id; returns the Stage its Aspect must cover. */
  public register(api: IConstruct, apiId: string, protection: P): IConstruct {
    const stage = stageOf(api);
    const protections = this.byStage.get(stage) ?? new Map<string, P>();
    this.byStage.set(stage, protections.set(apiId, protection));
    return stage;
  }
}

function stageOf(api: IConstruct): IConstruct {
  return Stage.of(api) ?? api.node.root;
}

/** Lets API Gateway invoke the authorizer function from the authorizers of the API with this id only. */
export function allowAuthorizerInvoke(scope: Construct, authorizer: AuthorizerFunction, apiId: string): void {
  authorizer.function.addPermission('InvokeAuthorizer', {
    principal: new ServicePrincipal('apigateway.amazonaws.com'),
    sourceArn: Stack.of(scope).formatArn({
      service: 'execute-api',
      resource: apiId,
      resourceName: 'authorizers/*',
    }),
    scope,
  });
}

/** Fails synthesis on an unprotectedMethods entry (but the default OPTIONS) that named nothing: a typo. */
export function validateEntriesUsed(
  scope: Construct,
  ledger: ProtectionLedger,
  what: 'method' | 'route',
  api: IConstruct,
): void {
  scope.node.addValidation({
    validate: () =>
      ledger
        .unusedEntries()
        .filter((entry) => entry !== 'OPTIONS')
        .map((entry) => `unprotectedMethods entry "${entry}" names no ${what} of ${api.node.path}`),
  });
}
