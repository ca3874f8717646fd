/**
 * The metrics the Lambdas publish (CloudWatch EMF through Powertools): the counts kept per platform
 * metric carry the `metric` dimension in lines of their own; the other metrics keep `service` alone,
 * which the alarms watch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../../adapters/powertools/observability';
import { METRIC, METRIC_DIMENSION, METRICS_NAMESPACE } from '../../../../core/observability/observability';
import { captureProcessOutput, type OutputCapture } from '../../../reliability/support/capture';

interface EmfLine {
  readonly _aws: {
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { readonly Name: string; readonly Unit: string }[];
    }[];
  };
  readonly [field: string]: unknown;
}

let capture: OutputCapture;

/** The EMF lines written since the capture began. */
function emfLines(): EmfLine[] {
  return capture
    .text()
    .split('\n')
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfLine);
}

beforeEach(() => {
  capture = captureProcessOutput();
});

afterEach(() => {
  capture.restore();
});

describe('createMetrics', () => {
  it("puts the instance's dimension on every line, per platform metric too", () => {
    const metrics = createMetrics('access-authorizer', { instance: '111/OrdersStack' });
    metrics.addMetric(METRIC.cacheHit, 'Count', 1);
    metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
    metrics.publishStoredMetrics();
    const lines = emfLines();
    expect(lines.map((line) => line._aws.CloudWatchMetrics[0]?.Dimensions)).toEqual([
      [['service', 'instance']],
      [['service', 'instance', METRIC_DIMENSION]],
    ]);
    expect(lines.map((line) => line.instance)).toEqual(['111/OrdersStack', '111/OrdersStack']);
  });

  it('publishes counts per platform metric with the metric dimension, one line per platform metric, summed', () => {
    const metrics = createMetrics('access-authorizer');
    metrics.addMetric(METRIC.cacheHit, 'Count', 1);
    metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
    metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
    metrics.addCountPerMetric(METRIC.denied, 'get_word', 1);
    metrics.publishStoredMetrics();

    const lines = emfLines();
    expect(lines).toHaveLength(3);
    const [plain, hits, getWord] = lines;
    expect(plain?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [['service']],
      Metrics: [{ Name: METRIC.cacheHit, Unit: 'Count' }],
    });
    expect(plain).toMatchObject({ service: 'access-authorizer', [METRIC.cacheHit]: 1 });
    expect(plain).not.toHaveProperty(METRIC_DIMENSION);
    expect(hits?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [['service', METRIC_DIMENSION]],
      Metrics: [{ Name: METRIC.allowed, Unit: 'Count' }],
    });
    expect(hits).toMatchObject({ service: 'access-authorizer', [METRIC_DIMENSION]: 'hits', Allowed: 2 });
    expect(getWord).toMatchObject({ [METRIC_DIMENSION]: 'get_word', Denied: 1 });
    expect(getWord).not.toHaveProperty(METRIC.allowed);
  });

  it('publishes each count once: the next publish carries only what was added since', () => {
    const metrics = createMetrics('access-reporter');
    metrics.addCountPerMetric(METRIC.alertPublished, 'hits', 1);
    metrics.publishStoredMetrics();
    metrics.addCountPerMetric(METRIC.alertPublished, 'search', 1);
    metrics.addMetric(METRIC.platformCall, 'Count', 1);
    metrics.publishStoredMetrics();

    const perMetric = emfLines().filter((line) => line[METRIC_DIMENSION] !== undefined);
    expect(perMetric.map((line) => [line[METRIC_DIMENSION], line[METRIC.alertPublished]])).toEqual([
      ['hits', 1],
      ['search', 1],
    ]);
  });

  describe('with a flush interval', () => {
    it('sums the counts of many invocations in memory and writes them once the interval has passed', () => {
      let clock = 1_000;
      const metrics = createMetrics('access-authorizer', { flushIntervalMs: 60_000, now: () => clock });
      for (let call = 0; call < 1_000; call++) {
        metrics.addMetric(METRIC.cacheHit, 'Count', 1);
        metrics.addMetric(METRIC.reportPublished, 'Count', 1);
        metrics.addCountPerMetric(METRIC.allowed, 'hits', 1);
        metrics.publishStoredMetrics();
        clock += 59;
      }
      // 1,000 invocations over 59 s: nothing written yet, not even Powertools' warning of an empty publish.
      expect(capture.text()).toBe('');
      clock = 61_000;
      metrics.addCountPerMetric(METRIC.denied, 'hits', 1);
      metrics.publishStoredMetrics();
      const lines = emfLines();
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({ [METRIC.cacheHit]: 1_000, [METRIC.reportPublished]: 1_000 });
      expect(lines[1]).toMatchObject({ [METRIC_DIMENSION]: 'hits', Allowed: 1_000, Denied: 1 });
    });

    it('writes errors and what the alarms read at the end of the invocation that counted them', () => {
      const metrics = createMetrics('access-authorizer', { flushIntervalMs: 60_000, now: () => 0 });
      metrics.addMetric(METRIC.cacheHit, 'Count', 1);
      for (const alarmed of [
        METRIC.authorizerError,
        METRIC.platformUnavailable,
        METRIC.platformMisconfigured,
        METRIC.usageNotRecorded,
        METRIC.cacheUnavailable,
      ]) {
        metrics.addMetric(alarmed, 'Count', 1);
      }
      metrics.publishStoredMetrics();
      const [line, ...others] = emfLines();
      expect(others).toEqual([]);
      expect(line).toMatchObject({ AuthorizerError: 1, PlatformMisconfigured: 1, UsageNotRecorded: 1 });
      expect(line).not.toHaveProperty(METRIC.cacheHit);
    });

    it('writes every count held on flush, due or not (an instance shutting down)', () => {
      const metrics = createMetrics('access-authorizer', { flushIntervalMs: 60_000, now: () => 0 });
      metrics.addCountPerMetric(METRIC.allowed, 'hits', 2);
      metrics.publishStoredMetrics();
      expect(emfLines()).toEqual([]);
      metrics.flush();
      expect(emfLines()).toMatchObject([{ [METRIC_DIMENSION]: 'hits', Allowed: 2 }]);
      metrics.flush();
      expect(emfLines()).toHaveLength(1);
    });
  });
});
