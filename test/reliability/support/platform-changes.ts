/**
 * Changes a provider makes at the platform while traffic flows, through its Account Management API
 * (local/platform/admin.ts), and when each is bound to have reached the cache:
 * - `at once`: the platform answers the next call itself (an app key the budget has not seen is checked
 *   with the platform before the cache decides);
 * - `webhook`: the platform's webhook for the change was answered 200 by the receiver, which stored the
 *   platform's fresh answer before answering;
 * - `window`: no webhook (none wired, or none exists, as for a limit): the change comes with the
 *   reporter's re-check of the application, which follows the first report message the authorizer
 *   publishes once the report window open at the change has closed.
 */
import { RECHECK_GRACE_MS } from '../../../core/decision/refusal-memory';
import { parseReportMessage } from '../../../core/reporting/message';
import type { RunningPlatform, WebhookAction } from '../../../local/platform';
import { WEBHOOK_TIMEOUT_MS } from '../../../local/platform/webhooks';
import type { Answer } from './answers';
import { type Application, METERED_LIMIT, METERED_PLAN, type ServiceFixture } from './fixture';

/** What the watched calls must answer once the change has applied. */
export type Expectation =
  | { readonly kind: 'refused' }
  | { readonly kind: 'allowed'; readonly plan?: string }
  /** The application's allowed calls stay at or under `limit` (none more once it is reached). */
  | { readonly kind: 'limited'; readonly limit: number };

export type Bound = 'at once' | 'webhook' | 'window';

export interface PlatformChange {
  readonly name: string;
  readonly method: 'PUT' | 'POST' | 'DELETE';
  /** Under `/admin/api/`. */
  readonly path: string;
  readonly params?: Readonly<Record<string, string>>;
  /** The webhook the platform sends for it; none for a limit (3scale has no such event). */
  readonly webhook?: WebhookAction;
  /** The platform applies it to the next call whatever the cache holds. */
  readonly immediate?: boolean;
  readonly appId: string;
  /** The keys whose calls the change is watched on (every call of the run sending one of them). */
  readonly keys: readonly string[];
  readonly expect: Expectation;
}

export interface ChangeContext {
  readonly fixture: ServiceFixture;
  /** Calls allowed so far for the application. */
  allowedOf(appId: string): number;
}

/** Calls of the changed application beyond the allowed ones that the lowered limit leaves. */
export const LIMIT_HEADROOM = 5;

const application = (app: Application) => `accounts/1/applications/${encodeURIComponent(app.id)}`;
const meteredHits = `application_plans/${METERED_PLAN}/metrics/hits/limits/eternity.xml`;

/** Suspends or resumes the application (porta's `PUT .../applications/{id}/{action}.xml`). */
function stateChange(action: 'suspend' | 'resume', webhook: WebhookAction, expect: Expectation) {
  return (app: Application): PlatformChange => ({
    name: action,
    method: 'PUT',
    path: `${application(app)}/${action}.xml`,
    webhook,
    appId: app.id,
    keys: app.keys,
    expect,
  });
}

/** The changes a run can make, each on the application the run gives it. */
export const CHANGES = {
  suspend: stateChange('suspend', 'suspended', { kind: 'refused' }),
  resume: stateChange('resume', 'updated', { kind: 'allowed' }),
  planChange: (app: Application): PlatformChange => ({
    name: 'plan change',
    method: 'PUT',
    path: `${application(app)}/change_plan.xml`,
    params: { plan_id: METERED_PLAN },
    webhook: 'plan_changed',
    appId: app.id,
    keys: app.keys,
    expect: { kind: 'allowed', plan: METERED_PLAN },
  }),
  limitDown: (app: Application, context: ChangeContext): PlatformChange => {
    const limit = context.allowedOf(app.id) + LIMIT_HEADROOM;
    return {
      name: `limit down (${METERED_LIMIT} -> allowed + ${LIMIT_HEADROOM})`,
      method: 'PUT',
      path: meteredHits,
      params: { value: String(limit) },
      appId: app.id,
      keys: app.keys,
      expect: { kind: 'limited', limit },
    };
  },
  limitUp: (app: Application): PlatformChange => ({
    name: `limit up (-> ${METERED_LIMIT})`,
    method: 'PUT',
    path: meteredHits,
    params: { value: String(METERED_LIMIT) },
    appId: app.id,
    keys: app.keys,
    expect: { kind: 'allowed' },
  }),
  revokeKey: (app: Application): PlatformChange => {
    const revoked = app.keys[0] as string;
    return {
      name: 'revoke an app key',
      method: 'DELETE',
      path: `${application(app)}/keys/${encodeURIComponent(revoked)}.xml`,
      webhook: 'key_deleted',
      appId: app.id,
      keys: [revoked],
      expect: { kind: 'refused' },
    };
  },
  addKey: (app: Application, added: string): PlatformChange => ({
    name: 'add an app key',
    method: 'POST',
    path: `${application(app)}/keys.xml`,
    params: { key: added },
    webhook: 'key_created',
    immediate: true,
    appId: app.id,
    keys: [added],
    expect: { kind: 'allowed' },
  }),
} as const;

export function boundOf(change: PlatformChange, webhooksWired: boolean): Bound {
  if (change.immediate) return 'at once';
  return webhooksWired && change.webhook !== undefined ? 'webhook' : 'window';
}

/** Makes the change as a provider does, through the Account Management API. */
export async function makeChange(
  platform: RunningPlatform,
  providerKey: string,
  change: PlatformChange,
): Promise<void> {
  const response = await fetch(`${platform.url}/admin/api/${change.path}`, {
    method: change.method,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ provider_key: providerKey, ...change.params }).toString(),
    signal: AbortSignal.timeout(5000),
  });
  const body = await response.text();
  if (response.status >= 300) {
    throw new Error(`${change.name}: the platform answered ${response.status}: ${body}`);
  }
}

/**
 * The status the receiver gave the change's webhook, undefined while it is on its way (the sender gives
 * each delivery WEBHOOK_TIMEOUT_MS, then records it failed, status 0). `since`: deliveries before the change.
 */
export function webhookStatus(
  platform: RunningPlatform,
  since: number,
  action: WebhookAction,
): number | undefined {
  return platform
    .webhookDeliveries()
    .slice(since)
    .find((delivery) => delivery.action === action)?.status;
}

/** How long a change may take to show before the run gives up on it: the webhook's deadline, and slack. */
export const CHANGE_GIVE_UP_MS = WEBHOOK_TIMEOUT_MS + 25_000;

interface Tally {
  allowed: number;
  refused: number;
  /**
   * Refused with `platform_unavailable`: the platform did not answer within the authorizer's deadline
   * (no fault is injected while changes are watched; a loaded machine can still be that slow). Such a
   * refusal says nothing about the change and is counted apart.
   */
  unanswered: number;
}

/** What a change's watch found, for the run's figures. */
export interface ChangeFigures {
  readonly change: string;
  readonly bound: Bound;
  /** From the platform's answer to the change to the point it is bound to have applied. */
  readonly appliedAfterMs: number;
  /** Watched calls between the change and that point. */
  readonly beforeApplied: Tally;
  /** Watched calls from that point on. */
  readonly afterApplied: Tally;
  /** Answers from that point on that break what the change says (empty when it held). */
  readonly violations: readonly string[];
}

/**
 * One change under watch: when it is bound to have applied, and every watched answer after that point
 * against what the change says. A call counts as after the point when its group started after it.
 */
export class ChangeWatch {
  /** performance.now() of the point the change is bound to have applied. */
  appliedAt: number | undefined;
  private readonly madeAt = performance.now();
  private allowedAtApplied = 0;
  private fallbacksAtApplied = 0;
  private readonly before: Tally = { allowed: 0, refused: 0, unanswered: 0 };
  private readonly after: Tally = { allowed: 0, refused: 0, unanswered: 0 };
  /** Report messages before this index were published before the change, or handed to a delivery that went wrong. */
  private messagesFrom: number;
  private readonly violations: string[] = [];

  constructor(
    readonly change: PlatformChange,
    readonly bound: Bound,
    /** Webhook deliveries and queued report messages before the change was made. */
    private readonly since: { readonly webhooks: number; readonly messages: number },
    private readonly credentialId: string,
  ) {
    this.messagesFrom = since.messages;
    if (bound === 'at once') this.appliedAt = this.madeAt;
  }

  /**
   * Whether a call starting at `now` must see the change: once it applied, and, for a change that lets
   * refused calls through, once an instance's memory of refusals (`refusalMemoryMs`) has run out too,
   * with its grace: while one call re-checks an expired refusal, the others keep it for up to
   * RECHECK_GRACE_MS (refusal-memory.ts).
   */
  appliedFor(now: number, refusalMemoryMs: number): boolean {
    if (this.appliedAt === undefined) return false;
    return (
      this.change.expect.kind !== 'allowed' || now >= this.appliedAt + refusalMemoryMs + RECHECK_GRACE_MS
    );
  }

  observe(answer: Answer, afterApplied: boolean): void {
    const allowed = answer.kind === 'allow';
    const tally = afterApplied ? this.after : this.before;
    if (answer.kind === 'deny' && answer.reason === 'platform_unavailable') {
      tally.unanswered++;
      return;
    }
    if (allowed) tally.allowed++;
    else tally.refused++;
    if (!afterApplied) return;
    const { expect } = this.change;
    if (expect.kind === 'refused' && allowed) this.violations.push('a call allowed');
    if (expect.kind !== 'allowed') return;
    if (!allowed) this.violations.push(`a call answered ${answer.kind} (${reasonOf(answer)})`);
    else if (expect.plan !== undefined && answer.context.plan !== expect.plan) {
      this.violations.push(`a call allowed on plan ${String(answer.context.plan)}`);
    }
  }

  /** A report message of the changed application published after the change reached the queue. */
  messageSince(delivered: readonly string[]): boolean {
    return delivered
      .slice(this.messagesFrom)
      .some((body) => parseReportMessage(body).credentialId === this.credentialId);
  }

  /**
   * Called after each group's delivery. `messageDelivered`: such a message was in the queue before this
   * delivery, so the reporter has just re-checked the application with the platform (window bound).
   * `clean`: the delivery logged no warning; one that did (a re-check not answered in time, say) may
   * not have re-checked the application, so only a message published after it counts. `handedOver`:
   * the messages queued when the delivery started.
   */
  checkApplied(
    platform: RunningPlatform,
    delivery: { readonly messageDelivered: boolean; readonly clean: boolean; readonly handedOver: number },
    allowedNow: number,
    fallbacksNow: number,
  ): void {
    if (this.appliedAt !== undefined) return;
    if (!delivery.clean) this.messagesFrom = Math.max(this.messagesFrom, delivery.handedOver);
    const messageDelivered = delivery.messageDelivered && delivery.clean;
    if (this.bound === 'webhook') {
      const status = webhookStatus(platform, this.since.webhooks, this.change.webhook as WebhookAction);
      if (status === undefined) return;
      if (status !== 200) this.violations.push(`the receiver answered the webhook ${status}`);
    } else if (!messageDelivered) {
      return;
    }
    this.appliedAt = performance.now();
    this.allowedAtApplied = allowedNow;
    this.fallbacksAtApplied = fallbacksNow;
  }

  /**
   * `allowedNow`: the application's allowed calls at the end of the stretch; `fallbacksNow`: calls the
   * authorizer decided through the platform because Redis did not answer in time (CacheUnavailable).
   */
  figures(allowedNow: number, fallbacksNow: number): ChangeFigures {
    const { expect } = this.change;
    const violations = [...this.violations];
    if (expect.kind === 'refused' && this.after.refused === 0) violations.push('no watched call after it');
    if (expect.kind === 'allowed' && this.after.allowed === 0) violations.push('no watched call after it');
    if (expect.kind === 'limited') {
      // Once the lowered limit is in the cache, the budget lets no call take the application past it;
      // calls it allowed before then (on the old limit) may have, and none more may follow. A call the
      // authorizer could not decide from Redis in time went to the platform (authrep), which counts
      // only the usage reported so far: such calls are the one way past the limit, and are counted.
      const bound = Math.max(expect.limit, this.allowedAtApplied) + (fallbacksNow - this.fallbacksAtApplied);
      if (allowedNow > bound) {
        violations.push(`${allowedNow} calls allowed, above ${bound} (limit ${expect.limit})`);
      }
      if (this.after.refused === 0) violations.push('no watched call refused after it');
    }
    if (this.after.unanswered > this.after.allowed + this.after.refused) {
      violations.push(`most watched calls after it unanswered by the platform (${this.after.unanswered})`);
    }
    return {
      change: this.change.name,
      bound: this.bound,
      appliedAfterMs: Math.round((this.appliedAt ?? Number.NaN) - this.madeAt),
      beforeApplied: { ...this.before },
      afterApplied: { ...this.after },
      violations,
    };
  }
}

function reasonOf(answer: Answer): string {
  return answer.kind === 'deny' ? (answer.reason ?? 'no reason') : answer.kind;
}
