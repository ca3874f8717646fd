/**
 * cdk-nag findings the library's own resources raise by design, acknowledged in the form each major of
 * cdk-nag reads: v2 reads `cdk_nag` metadata on the CloudFormation resource (NagSuppressions), v3 reads
 * the acknowledgements of aws-cdk-lib's Validations (>= 2.257) on the resource or any of its scopes, a
 * finding of a granular rule as `RuleId[finding]` (cdk-nag's MIGRATION.md). A provider's app runs one
 * or the other against our resources; both must see the same reasons.
 */
import * as cdk from 'aws-cdk-lib';
import { NagSuppressions } from 'cdk-nag';
import type { IConstruct } from 'constructs';

export interface NagAcknowledgement {
  /** The rule, such as `AwsSolutions-IAM4`. */
  readonly id: string;
  readonly reason: string;
  /** The findings of a granular rule this covers (`Resource::*`); all of them when absent. */
  readonly appliesTo?: readonly string[];
}

/** aws-cdk-lib's Validations where the app's copy has acknowledgements (2.257 and later). */
type ValidationsOf = (scope: IConstruct) => {
  acknowledge(...rules: { readonly id: string; readonly reason: string }[]): void;
};

function validationsOf(): ValidationsOf | undefined {
  const validations = (cdk as { Validations?: { of?: ValidationsOf } }).Validations;
  return typeof validations?.of === 'function' ? validations.of.bind(validations) : undefined;
}

/**
 * Acknowledges the rules on `construct` (v3: and everything under it; v2: its default resource, or with
 * `applyToChildren` every resource under it).
 */
export function acknowledgeNagRules(
  construct: IConstruct,
  rules: readonly NagAcknowledgement[],
  applyToChildren = false,
): void {
  NagSuppressions.addResourceSuppressions(
    construct,
    rules.map(({ id, reason, appliesTo }) => ({
      id,
      reason,
      ...(appliesTo && { appliesTo: [...appliesTo] }),
    })),
    applyToChildren,
  );
  const of = validationsOf();
  if (of === undefined) return;
  const validations = of(construct);
  if (typeof validations.acknowledge !== 'function') return;
  for (const { id, reason, appliesTo } of rules) {
    if (appliesTo === undefined) validations.acknowledge({ id, reason });
    else for (const finding of appliesTo) validations.acknowledge({ id: `${id}[${finding}]`, reason });
  }
}
