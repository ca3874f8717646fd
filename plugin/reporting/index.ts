/**
 * How the plugin's pending usage reaches the platform, one module per way: `sns` publishes the
 * authorizer's report message to the deployed stack's topic (the reporter Lambda reports it), and
 * `in-process` reports it from the application's own process. Both keep usage in the same pending
 * keys of Redis, under the same leases, so they mix with the authorizer and the reporter.
 */
import type { SnsClientSource } from '../../adapters/sns/client-source';
import type { ReportingDeps } from '../../core/reporting/flush-types';
import type { ReportPublisher } from '../../core/reporting/message';
import { inProcessReporting } from './in-process';
import { snsReporting } from './sns';

/** What a reporting mode is started with: the reporter's ports, and the mode's own settings. */
export interface ReportingContext extends Omit<ReportingDeps, 'onResynced'> {
  /** In-process: how often the sweep looks for usage of processes that died; 0 never. */
  readonly sweepIntervalMs: number;
  /** SNS: the client to publish with; default one built on the first publish. */
  readonly snsClient: SnsClientSource | undefined;
}

/** A started reporting mode: the core's report port, and how to stop it. */
export interface ReportChannel {
  readonly publisher: ReportPublisher;
  /** Reports what this mode still holds (in-process: every pending call), then stops. */
  close(): Promise<void>;
}

export interface ReportingMode {
  start(context: ReportingContext): ReportChannel;
}

export const REPORTING_MODES = {
  'in-process': inProcessReporting,
  sns: snsReporting,
} as const satisfies Readonly<Record<string, ReportingMode>>;

export type ReportingModeName = keyof typeof REPORTING_MODES;
export const REPORTING_MODE_NAMES = Object.keys(REPORTING_MODES) as ReportingModeName[];
