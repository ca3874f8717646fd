/**
 * What the protection of a REST API and of an HTTP API share: registry, invoke permission, unused entries,
 * an imported API's methods, and the options a second protect() must repeat.
 */
import { Stack, Stage } from 'aws-cdk-lib';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct, IConstruct } from 'constructs';
import { unprotectedMethods } from '../../contract/gateway-responses';
import { ConfigError } from '../../core/settings/config';
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

/** How an imported API's methods are named and defined, for the error that says what to do. */
const ENDPOINT_KINDS = {
  method: { plural: 'methods', define: 'api.root.resourceForPath(...).addMethod(...)' },
  route: { plural: 'routes', define: 'api.addRoutes(...) or new HttpRoute(...)' },
} as const;

/**
 * An imported API's methods are usually defined elsewhere, and CDK can only guard those this app creates:
 * an authorizer attached to none of them would leave the whole API open while looking protected. So an
 * imported API must have a method in this app, unless `methodsAttachedElsewhere` names the methods the
 * provider attaches the authorizer to himself.
 */
export function requireAnEndpoint(
  scope: Construct,
  ledger: ProtectionLedger,
  what: keyof typeof ENDPOINT_KINDS,
  api: IConstruct,
  attachedElsewhere: readonly string[],
): void {
  const names = unprotectedMethods(attachedElsewhere, 'methodsAttachedElsewhere').entries;
  const unnamed = names.find((entry) => !entry.includes(' '));
  if (unnamed !== undefined) {
    throw new ConfigError(
      'methodsAttachedElsewhere',
      `entries must each name a method and a resource path, such as GET /orders (got ${JSON.stringify(unnamed)})`,
    );
  }
  if (names.length > 0) return;
  const kind = ENDPOINT_KINDS[what];
  scope.node.addValidation({
    validate: () =>
      ledger.protectsAnyMethod()
        ? []
        : [
            `${api.node.path} is imported and this app defines none of its ${kind.plural}, so its authorizer would guard nothing and every ${what} would stay open. ` +
              `Define the ${kind.plural} in this app (${kind.define}), or protect the construct that defines them; ` +
              `if you attach the authorizer yourself (protection.authorizerId), list those ${kind.plural} in protect(api, { methodsAttachedElsewhere: ["GET /orders"] }).`,
          ],
  });
}

/** Options as a canonical string: key order and undefined values do not make two calls differ. */
export function canonicalOptions(options: object): string {
  return JSON.stringify(options, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, entry]) => entry !== undefined)
            .sort(([a], [b]) => a.localeCompare(b)),
        )
      : value,
  );
}

/**
 * A second protect() of an API must ask for what the first did: otherwise one of them would be ignored,
 * and an entry of unprotectedMethods silently kept or dropped.
 */
export function requireSameOptions(api: IConstruct, first: string, again: object): void {
  const second = canonicalOptions(again);
  if (second === first) return;
  throw new Error(
    `${api.node.path} is already protected with other options: protect() was called with ${first} and then with ${second}. ` +
      'Protect an API once, or call protect() again with the same options.',
  );
}
