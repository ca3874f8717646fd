import { AspectPriority, Aspects } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { stackFromContext } from './fixtures';

const stack = stackFromContext({ serviceId: '2555417735060' });
Aspects.of(stack).add(new AwsSolutionsChecks({ verbose: true }), { priority: AspectPriority.READONLY });
Aspects.of(stack).add(new ServerlessChecks({ verbose: true }), { priority: AspectPriority.READONLY });
const annotations = Annotations.fromStack(stack);

function findings(kind: 'error' | 'warning', pack: string): string[] {
  const pattern = Match.stringLikeRegexp(`${pack}-.*`);
  const found =
    kind === 'error' ? annotations.findError('*', pattern) : annotations.findWarning('*', pattern);
  return found.map((finding) => `${finding.id}: ${String(finding.entry.data).split('\n')[0]}`);
}

describe('cdk-nag', () => {
  it('finds no unsuppressed AwsSolutions errors', () => {
    expect(findings('error', 'AwsSolutions')).toEqual([]);
  });

  it('finds no unsuppressed AwsSolutions warnings', () => {
    expect(findings('warning', 'AwsSolutions')).toEqual([]);
  });

  it('finds no unsuppressed Serverless errors', () => {
    expect(findings('error', 'Serverless')).toEqual([]);
  });

  it('finds no unsuppressed Serverless warnings', () => {
    expect(findings('warning', 'Serverless')).toEqual([]);
  });
});
