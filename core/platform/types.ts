/** Types of the platform's Service Management API (docs/platform.md, Service Management API). */

export type Period = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year' | 'eternity';

/** Usage by metric system name, each a non-negative integer. */
export type Usage = Readonly<Record<string, number>>;

/** An application's credential as the platform knows it. */
export type Credential =
  | { readonly kind: 'user_key'; readonly userKey: string }
  | { readonly kind: 'app_id'; readonly appId: string; readonly appKey?: string };

/** How the provider authenticates to the platform. */
export type ServiceAuth =
  | { readonly kind: 'provider_key'; readonly providerKey: string }
  | { readonly kind: 'service_token'; readonly serviceToken: string };

export interface UsageReport {
  readonly metric: string;
  readonly period: Period;
  /** Epoch ms; undefined for eternity. */
  readonly periodStart?: number;
  /** Epoch ms; undefined for eternity. */
  readonly periodEnd?: number;
  readonly maxValue: number;
  readonly currentValue: number;
  readonly exceeded: boolean;
}

/** Parent metric name -> child metric names (from `hierarchy=1`). */
export type MetricHierarchy = Readonly<Record<string, readonly string[]>>;

export interface LimitHeaders {
  /** Calls left; -1 unlimited. */
  readonly remaining: number;
  /** Seconds to reset; -1 none. */
  readonly reset: number;
  readonly maxValue?: number;
}

export type DenialReason =
  | 'limits_exceeded'
  | 'application_not_active'
  | 'application_key_invalid'
  | 'service_not_active'
  | 'referrer_not_allowed';

export type InvalidCredentialCode = 'user_key_invalid' | 'application_not_found' | 'application_key_invalid';

export interface AuthorizationStatus {
  readonly plan?: string;
  readonly usageReports: readonly UsageReport[];
  readonly hierarchy: MetricHierarchy;
  readonly limitHeaders?: LimitHeaders;
}

/** Every answer of authorize/authrep, including network failures. The client never throws. */
export type AuthOutcome =
  | ({ readonly kind: 'authorized' } & AuthorizationStatus)
  | ({
      readonly kind: 'denied';
      readonly reason: DenialReason;
      readonly reasonText: string;
    } & AuthorizationStatus)
  | { readonly kind: 'invalid_credential'; readonly code: InvalidCredentialCode; readonly message: string }
  | PlatformFailure;

/** Answers that are not about the consumer's credential: our configuration, or the platform's availability. */
export type PlatformFailure =
  | {
      readonly kind: 'misconfigured';
      readonly code: string;
      readonly message: string;
      /** The platform's HTTP status; 0 when the client refused the input before sending anything. */
      readonly status: number;
    }
  | {
      readonly kind: 'unavailable';
      readonly cause: 'timeout' | 'refused' | 'status' | 'network';
      readonly status?: number;
      readonly message: string;
    };

/**
 * A report failure says how many of the given transactions, counted from the first, the platform
 * already accepted (earlier requests of a split report); undefined when unknown.
 */
export type ReportOutcome =
  | { readonly kind: 'accepted'; readonly requests: number }
  | (PlatformFailure & { readonly acceptedTransactions?: number });

export interface Transaction {
  readonly credential: Credential;
  readonly usage: Usage;
  /** Epoch ms; the platform accepts now-24h .. now+1h. */
  readonly timestamp?: number;
}

/** The port the core uses to talk to the platform. */
export interface PlatformPort {
  /** Checks credentials and limits for the usage; records nothing. */
  authorize(credential: Credential, usage?: Usage): Promise<AuthOutcome>;
  /** Authorizes and, when authorized, records the usage. */
  authrep(credential: Credential, usage: Usage): Promise<AuthOutcome>;
  /** Reports many transactions (split into requests of at most 1000). */
  report(transactions: readonly Transaction[]): Promise<ReportOutcome>;
}
