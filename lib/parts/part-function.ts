import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type AccessFunctionProps, accessFunction } from '../access-function';
import type { AccessBindings, FunctionBindings } from './bindings';
import type { AccessNetwork } from './network';

/** What every part that runs an access function is given: the shared settings, the network, logs, tracing. */
export interface FunctionPartProps {
  readonly bindings: AccessBindings;
  readonly network: AccessNetwork;
  readonly logRetention: RetentionDays;
  readonly tracing: boolean;
}

/** The function's own settings; placement, log retention and tracing come from the part. */
export type PartFunctionProps = Omit<AccessFunctionProps, 'network' | 'logRetention' | 'tracing'>;

/**
 * An access function of a part: placed in the part's network, with its log retention and tracing, and
 * bound to the shared settings (with what it may use beyond them).
 */
export function partFunction(
  scope: Construct,
  id: string,
  part: FunctionPartProps,
  props: PartFunctionProps,
  uses: FunctionBindings = {},
): LambdaFunction {
  const fn = accessFunction(scope, id, {
    ...props,
    network: part.network.functionPlacement,
    logRetention: part.logRetention,
    tracing: part.tracing,
  });
  part.bindings.bind(fn, uses);
  return fn;
}
