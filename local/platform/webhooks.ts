/**
 * The local platform's webhooks, as 3scale sends them: each event is POSTed to every configured URL as
 * a form with one field, `xml`, holding the `<event>` document. Delivery never holds up the answer of the
 * change that caused it; each delivery has a deadline, and a failure is logged (the real platform retries
 * a few times, then keeps the failure for the provider to read).
 */
import type { LogPort } from '../../core/observability/observability';

export const WEBHOOK_TIMEOUT_MS = 5000;

/** Application events 3scale's webhooks name (its `action`), those the local platform's changes cause. */
export type WebhookAction =
  | 'created'
  | 'updated'
  | 'suspended'
  | 'deleted'
  | 'plan_changed'
  | 'user_key_updated'
  | 'key_created'
  | 'key_deleted';

export interface WebhookDelivery {
  readonly url: string;
  readonly action: WebhookAction;
  /** HTTP status, or 0 when the request failed or timed out. */
  readonly status: number;
}

export class WebhookSender {
  private readonly urls: string[];
  private readonly sending = new Set<Promise<void>>();
  private readonly delivered: WebhookDelivery[] = [];

  constructor(
    urls: readonly string[],
    private readonly logger: Pick<LogPort, 'warn'>,
    private readonly timeoutMs = WEBHOOK_TIMEOUT_MS,
  ) {
    this.urls = [...urls];
  }

  addUrl(url: string): void {
    new URL(url);
    this.urls.push(url);
  }

  /** Starts the deliveries of one event and returns at once. */
  send(action: WebhookAction, xml: string): void {
    for (const url of this.urls) {
      const delivery = this.deliver(url, action, xml).finally(() => this.sending.delete(delivery));
      this.sending.add(delivery);
    }
  }

  deliveries(): readonly WebhookDelivery[] {
    return [...this.delivered];
  }

  /** Waits for the deliveries under way (each ends by its deadline). */
  async settle(): Promise<void> {
    await Promise.all([...this.sending]);
  }

  private async deliver(url: string, action: WebhookAction, xml: string): Promise<void> {
    let status = 0;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ xml }).toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.arrayBuffer();
      status = response.status;
    } catch (error) {
      this.logger.warn('webhook not delivered', { action, error: (error as Error).message });
    }
    if (status !== 0 && (status < 200 || status > 299)) {
      this.logger.warn('webhook refused by its receiver', { action, status });
    }
    this.delivered.push({ url: new URL(url).origin + new URL(url).pathname, action, status });
  }
}
