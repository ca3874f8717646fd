/**
 * What the decision (access.ts) takes and gives: a call with its credential read, and the decision about
 * it, the same for every edge (gateway adapters, the SOAP proxy, the plugin).
 */
import type { LimitInfo, RecordedUsage, ThrottleFeedback, ThrottleRefusal } from '../budget/cache-types';
import type { Credential, DenialReason } from '../platform/types';
import type { QueryParameters } from './mapping';

export type DenyReason =
  | DenialReason
  | 'no_mapping_rule'
  | 'platform_unavailable'
  | 'platform_misconfigured'
  | 'rate_limited'
  | 'platform_busy';

export type AccessDecision =
  | { readonly effect: 'unauthorized' }
  | {
      readonly effect: 'allow' | 'deny';
      readonly credentialId: string;
      readonly reason?: DenyReason;
      /** Plan name; empty when no platform answer told it. */
      readonly plan: string;
      /** Metric names the request maps to, comma-joined. */
      readonly metrics: string;
      /** The app id in app_id mode (user keys do not reveal their application). */
      readonly applicationId?: string;
      /**
       * The limit that refused the call, or the most constrained limit of an allowed one with what it
       * leaves; undefined when the cache did not decide the call or no limit applies to it.
       */
      readonly limit?: LimitInfo & { readonly remaining?: number };
      /**
       * The throttle that refused the call (`rate_limited`), or the tightest throttle of an allowed one
       * with what it leaves; undefined when no throttle applies (docs/throttling.md).
       */
      readonly throttle?: ThrottleFeedback | ThrottleRefusal;
      /**
       * Whole seconds until a refused call would pass (retry-after.ts); undefined for an allowed call and
       * for a refusal that waiting does not mend.
       */
      readonly retryAfterSeconds?: number;
      /**
       * The usage an allowed call added to the budget's pending usage, which `giveBack` can take back;
       * undefined when the platform counted it already (a first call's authrep) or nothing was kept.
       */
      readonly recorded?: RecordedUsage;
    };

/** A call to decide with its credential read, whatever carried it (a gateway's event, a SOAP envelope). */
export interface AccessRequest {
  readonly credential: Credential;
  readonly method: string;
  /** The path as the client sent it (mapping rules match its normalized form). */
  readonly path: string;
  readonly query: QueryParameters;
  /** The client's IP address, when the gateway gave it (GatewayRequest.sourceAddress). */
  readonly sourceAddress?: string;
}
